#!/usr/bin/env python3
"""hostile_inputs.py CLI [--markdown] — every class of bad input tried on statescope-cli, and what it says.

Each case makes its input in a fresh folder (files from the real writers where one exists: torch.save,
h5py), runs one CLI command, and checks the exit code, a fragment of the message, and that nothing
it must not touch changed. Prints one line per case (or, with --markdown, the table of
docs/reliability.md) and exits 1 if any case does not behave as stated. CTest runs it
(Reliability.HostileInputsGetNamedErrors).

    .venv/bin/python tools/hostile_inputs.py build/bin/statescope-cli --markdown
"""
import hashlib
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

import h5py
import numpy as np
import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests/golden"
CLI = sys.argv[1]
TMP = pathlib.Path(tempfile.mkdtemp(prefix="statescope_hostile_"))
CACHE = TMP / "cache"  # a token cache of our own: nothing touches the user's
cases = []  # (class, command shown, expected exit, fragment, got exit, message, ok)


def fresh(name):
    d = TMP / name
    d.mkdir(parents=True)
    return d


def model_copy(name, src=GOLDEN / "hf-untied"):
    d = fresh(name)
    for f in pathlib.Path(src).iterdir():
        shutil.copy(f, d / f.name)
    return d


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def cli(args, env=None):
    e = dict(os.environ, STATESCOPE_CACHE=str(CACHE), STATESCOPE_THREADS="1")
    e.update(env or {})
    p = subprocess.run([CLI] + args, capture_output=True, text=True, env=e, timeout=300)
    # A usage error (exit 2) ends with CLI11's "Run with --help ..." after the line that names the flag.
    err = [l for l in p.stderr.strip().splitlines() if not l.startswith("Run with --help")]
    return p.returncode, (err or p.stdout.strip().splitlines() or [""])[-1]


def case(cls, args, code, fragment, untouched=(), shown=None, env=None):
    before = {str(p): digest(p) for p in untouched}
    got, msg = cli(args, env)
    ok = got == code and fragment in msg and all(digest(p) == h for p, h in before.items())
    shown = shown or " ".join(str(a).replace(str(TMP) + "/", "") for a in args)
    cases.append((cls, shown, code, fragment, got, msg.replace(str(TMP) + "/", ""), ok))


def edit_config(d, **kv):
    c = json.loads((d / "config.json").read_text())
    c.update(kv)
    (d / "config.json").write_text(json.dumps(c))


def write_spec(name, spec):
    p = TMP / name
    base = {"model": "embedded", "T": 32, "seed": 1,
            "posttrain": {"steps": 2, "batch": 2, "lr": 1e-3, "warmup": 1},
            "policies": [{"kind": "zero"}], "eval": {"length": 64, "sequences": 2, "segment": 32, "batch": 2}}
    for k, v in spec.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            base[k] = dict(base[k], **v)
        else:
            base[k] = v
    p.write_text(json.dumps(base))
    return p


def tokenizer_with(name, edit):
    d = fresh(name)
    t = json.loads((GOLDEN / "tokenizer/tokenizer.json").read_text())
    edit(t)
    (d / "tokenizer.json").write_text(json.dumps(t))
    return d / "tokenizer.json"


text = TMP / "text.txt"
text.write_text((ROOT / "data/corpus/austen-novels.txt").read_text()[:20000])

# --- model directories -------------------------------------------------------------------------
d = fresh("ssm_statedict")  # mamba_ssm's own way: torch.save(model.state_dict()) -> an OrderedDict
shutil.copy(GOLDEN / "ssm-tied/config.json", d)
shutil.copy(GOLDEN / "ssm-tied/pytorch_model.bin", d)
case("mamba_ssm checkpoint (torch.save of a state_dict: an OrderedDict) loads", ["info", "--model", d], 0, "")

d = model_copy("truncated")
with open(d / "model.safetensors", "r+b") as f:
    f.truncate(os.path.getsize(d / "model.safetensors") - 100)
case("safetensors cut short", ["info", "--model", d], 1, "outside the data buffer")

d = model_copy("header_lie")
raw = (d / "model.safetensors").read_bytes()
(d / "model.safetensors").write_bytes(struct.pack("<Q", 1 << 60) + raw[8:])
case("safetensors header length 2^60", ["info", "--model", d], 1, "model.safetensors")

for field, value in [("num_hidden_layers", 1e9), ("vocab_size", 15_000_000), ("state_size", 1_000_000_000)]:
    d = model_copy("cfg_" + field)
    edit_config(d, **{field: value})
    case(f"config.json {field} = {value:g} (allocation before validation)", ["info", "--model", d], 1, "config")

# An architecture statescope does not know names the field and the ones it knows; a Mamba-1 checkpoint
# with a misshapen tensor names the tensor.
d = model_copy("cfg_rwkv")
edit_config(d, model_type="rwkv")
case("config.json model_type = rwkv (unknown architecture)", ["info", "--model", d], 1,
     "field 'model_type' is \"rwkv\"; statescope knows \"mamba2\" (Mamba-2), \"mamba\" (Mamba-1), \"gla\" (GLA)")
# fla's hybrid models (softmax attention layers among the recurrent ones) and options statescope does
# not implement are refused naming the field, never half-loaded.
d = model_copy("gla_hybrid", GOLDEN / "fla-gla")
edit_config(d, attn={"layers": [1], "num_heads": 2, "num_kv_heads": 2, "window_size": None})
case("fla GLA config with hybrid attention layers (attn)", ["info", "--model", d], 1, "field 'attn' is set: hybrid GLA models")
d = model_copy("gla_feature_map", GOLDEN / "fla-gla")
edit_config(d, feature_map="relu")
case("fla GLA config with a feature map", ["info", "--model", d], 1, "field 'feature_map' is \"relu\"")
d = model_copy("gdn_hybrid", GOLDEN / "fla-gdn")
edit_config(d, attn={"layers": [1], "num_heads": 2, "num_kv_heads": 2, "window_size": None})
case("fla Gated DeltaNet config with hybrid attention layers (attn)", ["info", "--model", d], 1,
     "field 'attn' is set: hybrid Gated DeltaNet models")
d = model_copy("gdn_attnres", GOLDEN / "fla-gdn")
edit_config(d, attnres_block_size=4)
case("fla Gated DeltaNet config with attention residuals", ["info", "--model", d], 1,
     "field 'attnres_block_size' is set: attention residuals are not supported")
d = TMP / "mamba1_misshapen"
shutil.copytree(GOLDEN / "hf-mamba1", d)
cfg = json.loads((d / "config.json").read_text())
cfg["state_size"] = 7  # the file's A_log is [48, 6]
(d / "config.json").write_text(json.dumps(cfg))
case("Mamba-1 checkpoint whose A_log does not match config.json", ["info", "--model", d], 1,
     "tensor 'backbone.layers.0.mixer.A_log' has shape [48, 6], expected [48, 7]")

case("Mamba-1 in mamba_ssm's layout (torch.save of a state dict, ssm_cfg without layer) loads",
     ["info", "--model", GOLDEN / "ssm-mamba1"], 0, "", shown="info --model tests/golden/ssm-mamba1")
case("pretrain --arch mamba1 given a Mamba-2 option (--headdim)",
     ["pretrain", "--arch", "mamba1", "--headdim", "8", "--steps", "1", "--out", TMP / "m1_headdim"], 1,
     "--headdim is a Mamba-2 option; --arch mamba1 has no such setting")
case("pretrain --arch mamba2 given a Mamba-1 option (--dt-rank)",
     ["pretrain", "--dt-rank", "4", "--steps", "1", "--out", TMP / "m2_dtrank"], 1,
     "--dt-rank is a Mamba-1 option; --arch mamba2 has no such setting")

def safetensors_header(path):
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    return raw, n, json.loads(raw[8:8 + n])


d = model_copy("nan_weight")  # one float32 of a real file set to NaN, in place
raw, n, header = safetensors_header(d / "model.safetensors")
at = 8 + n + header["backbone.layers.1.mixer.out_proj.weight"]["data_offsets"][0] + 4 * 3
(d / "model.safetensors").write_bytes(raw[:at] + struct.pack("<f", float("nan")) + raw[at + 4:])
case("a NaN in a weight", ["info", "--model", d], 1, "'backbone.layers.1.mixer.out_proj.weight' holds 1 non-finite")

for cls, shard in [("shard index pointing outside the folder (../)", "../hf-untied/model.safetensors"),
                   ("shard index with an absolute path", str(GOLDEN / "hf-untied/model.safetensors"))]:
    d = model_copy("shard_" + str(len(cases)))
    names = [k for k in safetensors_header(d / "model.safetensors")[2] if k != "__metadata__"]
    os.remove(d / "model.safetensors")
    (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {n: shard for n in names}}))
    case(cls, ["info", "--model", d], 1, "index")


class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + str(TMP / "pwned"),))


d = fresh("evil_pickle")
shutil.copy(GOLDEN / "ssm-tied/config.json", d)
torch.save({"x": Evil()}, d / "pytorch_model.bin")
case("pickle that calls os.system", ["info", "--model", d], 1, "system")
cases[-1] = cases[-1][:6] + (cases[-1][6] and not (TMP / "pwned").exists(),)

d = fresh("deep_pickle")
shutil.copy(GOLDEN / "ssm-tied/config.json", d)
with zipfile.ZipFile(d / "pytorch_model.bin", "w") as z:
    z.writestr("archive/data.pkl", b"\x80\x02" + b"]" * 1_000_000 + b".")
    z.writestr("archive/version", "3\n")
case("pickle nested 10^6 lists deep", ["info", "--model", d], 1, "deep")

d = fresh("zip_bomb")  # torch.save's archive with its one storage record deflated: 0.4 MB holding 400 MB
shutil.copy(GOLDEN / "ssm-tied/config.json", d)
buf = TMP / "plain.bin"
torch.save({"w": torch.zeros(100_000_000)}, buf)
with zipfile.ZipFile(buf) as src, zipfile.ZipFile(d / "pytorch_model.bin", "w") as z:
    for info in src.infolist():
        data = src.read(info.filename)
        big = "/data/" in info.filename
        z.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED if big else zipfile.ZIP_STORED)
os.remove(buf)
case(f"zip record inflating to 400 MB (the file: {os.path.getsize(d / 'pytorch_model.bin') >> 10} KiB)",
     ["info", "--model", d], 1, "")

# --- tokenizers ---------------------------------------------------------------------------------
def set_vocab(value):
    def edit(t):
        t["model"]["vocab"]["e"] = value
    return edit


for cls, value, frag in [("tokenizer.json id -5", -5, "-5"), ("tokenizer.json id 2^31 + 7", 2**31 + 7, "2147483655"),
                         ("tokenizer.json id 2^40", 2**40, "1099511627776")]:
    tok = tokenizer_with("tok_" + str(len(cases)), set_vocab(value))
    case(cls, ["data", "--data", text, "--tokenizer", tok], 1, frag)
tok = tokenizer_with("tok_dup", lambda t: t["model"]["vocab"].update({"e": t["model"]["vocab"]["t"]}))
case("tokenizer.json: two tokens with one id", ["data", "--data", text, "--tokenizer", tok], 1, "")

# --- specs and flags ----------------------------------------------------------------------------
for cls, spec, frag in [
    ("spec typo in a nested field (posttrain.stpes)", {"posttrain": {"stpes": 3}}, "posttrain.stpes"),
    ("spec typo in a policy (policies[0].sigmaa)", {"policies": [{"kind": "random", "sigmaa": 1}]}, "sigmaa"),
    ("spec T = 0", {"T": 0}, "T"),
    ("spec posttrain.batch = 2e7", {"posttrain": {"batch": 20_000_000}}, "batch"),
    ("spec seed = 1.5", {"seed": 1.5}, "seed"),
    ("spec eval.length = -32", {"eval": {"length": -32}}, "length"),
]:
    case(cls, ["run", write_spec(f"spec{len(cases)}.json", spec), "-o", TMP / f"o{len(cases)}.h5"], 1, frag)
# A value that is not a finite number is a usage error (exit 2) naming the flag; one out of range, exit 1.
for flag, value, code in [("--grad-clip", "nan", 2), ("--lr", "1e308", 2), ("--lr", "20", 1), ("--warmup", "-3", 1), ("--min-lr-ratio", "2", 1)]:
    case(f"posttrain {flag} {value}", ["posttrain", "--model", "embedded", "--T", "32",
                                       "--steps", "1", "--out", TMP / f"m{len(cases)}", flag, value], code,
         flag if code == 2 else flag.lstrip("-").replace("-", "_"))

# --- outputs that must not be destroyed ---------------------------------------------------------
good = write_spec("good.json", {})
keep = TMP / "notes.txt"
keep.write_text("a file that must survive\n")
case("-o names an existing file (no --overwrite)", ["run", good, "-o", keep], 1, "--overwrite", untouched=[keep])
m = model_copy("as_output", ROOT / "data/models/embedded")
case("-o is the model being run (with --overwrite)",
     ["run", write_spec("self.json", {"model": str(m)}), "-o", m / "model.safetensors", "--overwrite"], 1, "input",
     untouched=[m / "model.safetensors"])
exp = TMP / "exp.h5"
cli(["run", good, "-o", exp])
copied = TMP / "copying.h5"
copying = ["copying", "--L", "3", "--alphabet", "3", "--steps", "2", "--batch", "2", "--samples", "2",
           "--policies", "zero", "-o", copied]
cli(copying)
case("--append onto an existing run name", copying + ["--append"], 1, "replace-run", untouched=[copied])
bad = write_spec("fails.json", {"data": str(TMP / "no-such-data")})
case("a failing run onto an existing file (--overwrite)", ["run", bad, "-o", exp, "--overwrite"], 1, "no-such-data",
     untouched=[exp])

# Two writers of one output: the second is refused at once, the first finishes and its file reads.
slow = write_spec("slow.json", {"posttrain": {"steps": 40}})
both = TMP / "both.h5"
first = subprocess.Popen([CLI, "run", slow, "-o", both], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, STATESCOPE_CACHE=str(CACHE)))
deadline = time.time() + 60
while time.time() < deadline and not any(p.name.startswith("both.h5") and p.name != "both.h5"
                                         for p in TMP.iterdir()):
    time.sleep(0.05)
case("a second process writing the same -o", ["run", slow, "-o", both], 1, "")
first_rc = first.wait()
ok_first = first_rc == 0 and subprocess.run([CLI, "inspect", both], capture_output=True).returncode == 0
cases[-1] = cases[-1][:6] + (cases[-1][6] and ok_first,)

# --- experiment files ---------------------------------------------------------------------------
case("experiment file declaring 2 x 5e8 float64 (8 KB on disk)", ["inspect", GOLDEN / "hostile/sparse.h5"], 1, "")
foreign = TMP / "foreign.h5"
with h5py.File(foreign, "w") as f:
    f.create_group("baseline").attrs["status"] = "finished"
case("a foreign HDF5 file", ["inspect", foreign], 1, "not a statescope experiment file")
future = TMP / "future.h5"
shutil.copy(exp, future)
with h5py.File(future, "a") as f:
    f.attrs["format_version"] = "999"
case("format_version 999", ["inspect", future], 1, "999")
damaged = TMP / "damaged.h5"
damaged.write_bytes(exp.read_bytes()[: os.path.getsize(exp) // 2])
case("an experiment file cut in half", ["inspect", damaged], 1, "damaged.h5")
grid = TMP / "grid.h5"
shutil.copy(exp, grid)
with h5py.File(grid, "a") as f:
    g = f.create_group("zero/passkey")
    g["length"] = np.array([64, 128])
    g["depth"] = np.array([0.0, 0.5, 1.0])
    g["accuracy"] = np.zeros(5)
    g["digit_accuracy"] = np.zeros(5)
case("a passkey grid of 5 cells for 2 x 3 axes", ["inspect", grid], 1, "passkey/accuracy holds 5 values")

# --- numbers that went wrong --------------------------------------------------------------------
inp = TMP / "nan_state.h5"
with h5py.File(GOLDEN / "hf-untied/golden.h5") as g, h5py.File(inp, "w") as f:
    f["input_ids"] = g["next_ids"][()]
    s = g["final_ssm_state"][()].copy()
    s.flat[11] = np.inf
    f["initial_ssm_state"] = s
case("an Inf in an initial state", ["forward", "--model", GOLDEN / "hf-untied", "--input", inp, "--output", TMP / "f.h5"],
     1, "'initial_ssm_state' holds 1 non-finite")

# --- a hostile Hugging Face cache (issue 52): nothing read, listed or quoted from outside it --------
def hostile_cache(name, edit):
    """A copy of the cache huggingface_hub wrote (tests/golden/hf-cache), with `edit` applied."""
    hub = fresh(name) / "hub"
    shutil.copytree(GOLDEN / "hf-cache/hub", hub, symlinks=True)
    outside = fresh(name + "_outside")
    (outside / "secret.txt").write_text("SECRET-never-quoted\n")
    (outside / "main").write_text("SECRET-never-quoted\n")
    edit(hub / "models--statescope-test--tiny-mamba2", outside)
    return hub


def relink(path, target):
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


def cache_case(cls, hub, args, code, fragment):
    before = len(cases)
    e = dict(os.environ, STATESCOPE_CACHE=str(CACHE), STATESCOPE_THREADS="1", HF_HUB_CACHE=str(hub))
    p = subprocess.run([CLI] + args, capture_output=True, text=True, env=e, timeout=300)
    out = p.stdout + p.stderr
    msg = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or [""])[-1]
    ok = p.returncode == code and fragment in out and "SECRET" not in out and "\x1b" not in out
    cases.append((cls, " ".join(str(a) for a in args), code, fragment, p.returncode, msg.replace(str(TMP) + "/", ""), ok))


main_commit = "bbbbbbbb22222222222222222222222222222222"
cache_case("HF cache: refs/main links to a file outside", hostile_cache("hc_ref", lambda r, o: relink(r / "refs/main", o / "main")),
           ["info", "--model", "statescope-test/tiny-mamba2"], 1, "outside")
cache_case("HF cache: snapshots/ links to another folder", hostile_cache("hc_snaps", lambda r, o: relink(r / "snapshots", o)),
           ["info", "--model", "statescope-test/tiny-mamba2@bbbbbbbb2222"], 1, "outside")
cache_case("HF cache: a snapshot links to /", hostile_cache("hc_root", lambda r, o: relink(r / "snapshots" / main_commit, "/")),
           ["info", "--model", "statescope-test/tiny-mamba2"], 1, "outside")
cache_case("HF cache: config.json links outside the repository",
           hostile_cache("hc_cfg", lambda r, o: relink(r / "snapshots" / main_commit / "config.json", o / "secret.txt")),
           ["info", "--model", "statescope-test/tiny-mamba2"], 1, "outside")
cache_case("HF cache: refs/ links to /usr/share/doc", hostile_cache("hc_refs", lambda r, o: relink(r / "refs", "/usr/share/doc")),
           ["info", "--model", "statescope-test/tiny-mamba2"], 1, "outside")
cache_case("HF cache: a snapshot folder named with an escape sequence",
           hostile_cache("hc_esc", lambda r, o: (r / "snapshots" / "\x1b[31mred").symlink_to(main_commit)),
           ["models", "--all"], 0, "")
corpus = fresh("linked_corpus")
(corpus / "a.txt").write_text("Some text of the corpus itself.\n" * 50)
(corpus / "b.txt").symlink_to("/etc/hostname")
case("a corpus folder with a link to a file outside it", ["data", "--data", corpus], 1, "outside")

# --- a second output flag that names an input (issue 52) -----------------------------------------
m2 = model_copy("record_target", ROOT / "data/models/embedded")
case("posttrain --record is the model's own weights",
     ["posttrain", "--model", m2, "--T", "16", "--steps", "1", "--batch", "1", "--out", TMP / "rec_out",
      "--record", m2 / "model.safetensors", "--overwrite"], 1, "input", untouched=[m2 / "model.safetensors"])
text_in = TMP / "attention_data.txt"
text_in.write_text("Some text for the attention input, long enough to read.\n" * 20)
case("attention -o is its own --data", ["attention", "--data", text_in, "-o", text_in, "--overwrite", "--length", "16"], 1,
     "input", untouched=[text_in])

# --- limits that allocate (issue 52) --------------------------------------------------------------
case("attention --length 4096 under a 100 MB memory budget", ["attention", "--length", "4096", "-o", TMP / "att.h5"], 1,
     "GiB", env={"STATESCOPE_MEMORY_BUDGET": "100000000"})
inf = model_copy("inf_eps", ROOT / "data/models/embedded")
edit_config(inf, layer_norm_epsilon=1e400)
case("layer_norm_epsilon 1e400 (Infinity) in config.json", ["info", "--model", inf], 1, "layer_norm_epsilon")
case("LongMamba length 10^12", ["run", write_spec("longmamba.json", {"policies": [], "interventions": [
    {"kind": "longmamba", "length": 1000000000000}]}), "-o", TMP / "lm.h5"], 1, "length")
case("--max-decompressed -1", ["data", "--data", text_in, "--max-decompressed", "-1"], 2, "--max-decompressed")
case("--T -3", ["eval", "--T", "-3", "-o", TMP / "t.h5"], 2, "--T")
case("--threads 1000", ["--threads", "1000", "info", "--model", "embedded"], 1, "CPUs")
case("a dt_scale intervention without a factor", ["run", write_spec("nofactor.json", {"policies": [], "interventions": [
    {"kind": "dt_scale"}]}), "-o", TMP / "nf.h5"], 1, "factor")
case("an intervention named 'baseline'", ["run", write_spec("named.json", {"policies": [], "interventions": [
    {"kind": "reset", "period": 8, "name": "baseline"}]}), "-o", TMP / "nb.h5"], 1, "baseline")
case("a spec with nothing to run", ["run", write_spec("empty.json", {"baseline": False, "policies": []}), "-o", TMP / "e.h5"],
     1, "nothing to run")
case("a fitted policy with fit_length 10^15", ["run", write_spec("fit.json", {"policies": [
    {"kind": "fitted", "fit_length": 1000000000000000}]}), "-o", TMP / "fl.h5"], 1, "1000000000]")

# --- report -------------------------------------------------------------------------------------
failed = [c for c in cases if not c[6]]
if "--markdown" in sys.argv:
    print("| input | command | exit | message |")
    print("|---|---|---|---|")
    for cls, shown, code, frag, got, msg, ok in cases:
        print(f"| {cls} | `{shown}` | {got} | {msg.replace('|', '/')[:220]} |")
else:
    for cls, shown, code, frag, got, msg, ok in cases:
        print(("ok    " if ok else "FAIL  ") + f"{cls}: exit {got} (want {code}), {msg[:160]}")
        if not ok:
            print(f"      wanted '{frag}' in the message; command: {shown}")
shutil.rmtree(TMP, ignore_errors=True)
print(f"{len(cases) - len(failed)}/{len(cases)} hostile inputs behave as stated", file=sys.stderr)
sys.exit(1 if failed else 0)
