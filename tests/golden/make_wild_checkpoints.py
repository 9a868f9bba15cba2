#!/usr/bin/env python3
"""make_wild_checkpoints.py — checkpoint files written by the writers users have (run by hand).

What it is: the same tiny Mamba-2 written the ways real checkpoints are written, each with the
logits transformers (or plain torch) computes from exactly those weights, so tests/test_checkpoint.cpp
can check that statescope reads every one of them and gets the same numbers:
  - mamba_ssm layout via torch.save(module.state_dict()) of a real nn.Module (an OrderedDict with
    _metadata, tied lm_head sharing the embedding's storage), in fp32 (tests/golden/ssm-tied, the
    weights of hf-tied), fp16 and bf16 (wild/ssm-statedict-*);
  - transformers 5 save_pretrained (safetensors) in fp16, bf16, and fp32 sharded (wild/hf5-*);
  - transformers 4 save_pretrained(safe_serialization=False) (pytorch_model.bin, the format of many
    older hub checkpoints) in fp32, bf16, and fp32 sharded with pytorch_model.bin.index.json (wild/hf4-*).
Half-precision fixtures are checked against the fp32 model whose weights went through that dtype.
The transformers 4 files are checked against transformers 5 reading them (section tf4-golden): the
pure-torch Mamba2 forward of transformers 4.46.3 is not a reference (measured here: its logits differ
from transformers 5's by 0.135 on these weights, and its logits for a prefix change with the length
of what follows by 0.035, which a causal model cannot do).

Regenerate (outputs are committed; SECTION tf5 with the project's transformers 5, tf4 with 4.46):
    STATESCOPE_DEV=1 bash tools/setup.sh
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_wild_checkpoints.py tf5
    .venv/bin/python -m pip install --no-deps --target /tmp/tf4 transformers==4.46.3 \
        huggingface_hub==0.26.5 tokenizers==0.20.3 requests urllib3 idna certifi charset_normalizer
    HF_HUB_OFFLINE=1 PYTHONPATH=/tmp/tf4 .venv/bin/python tests/golden/make_wild_checkpoints.py tf4
    HF_HUB_OFFLINE=1 .venv/bin/python tests/golden/make_wild_checkpoints.py tf4-golden
"""
import os
import shutil
import sys

import h5py
import numpy as np
import torch
import transformers
from transformers import Mamba2ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
WILD = os.path.join(HERE, "wild")
sys.path.insert(0, HERE)
from make_golden import SEED, build, save_mamba_ssm_config  # noqa: E402


def ids():
    g = torch.Generator().manual_seed(SEED + 7)
    return torch.randint(0, 60, (2, 45), generator=g)


def write_golden(d, model, writer):
    x = ids()
    with torch.no_grad():
        logits = model(x).logits.float()
    with h5py.File(os.path.join(d, "golden.h5"), "w") as f:
        f.attrs["writer"] = writer
        f.attrs["transformers"] = str(transformers.__version__)
        f.attrs["torch"] = str(torch.__version__)
        f["ids"] = x.numpy().astype(np.int64)
        f["logits"] = logits.numpy()
    print(f"{os.path.relpath(d, HERE)}: {writer}, logits {tuple(logits.shape)}")


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def through(model, dtype):
    """The fp32 model whose weights went through `dtype` (what a reader of a `dtype` file must get)."""
    m = Mamba2ForCausalLM(model.config).float().eval()
    m.load_state_dict({k: v.to(dtype).float() for k, v in model.state_dict().items()})
    return m


def save_state_dict_mamba_ssm(model, d, dtype, raw_vocab=60, ssm_cfg=None):
    """torch.save(module.state_dict()) of a module with mamba_ssm's parameter names, as MambaLMHeadModel does
    (a module of `model`'s own class: Mamba2ForCausalLM, or MambaForCausalLM with a Mamba-1 ssm_cfg)."""
    m = type(model)(model.config).to(dtype).eval()
    m.load_state_dict(model.state_dict())
    m.backbone.embedding = m.backbone.embeddings  # mamba_ssm names the embedding backbone.embedding
    del m.backbone.embeddings
    sd = m.state_dict()  # an OrderedDict with _metadata; lm_head.weight shares the embedding's storage
    assert type(sd).__name__ == "OrderedDict" and hasattr(sd, "_metadata")
    assert sd["lm_head.weight"].data_ptr() == sd["backbone.embedding.weight"].data_ptr()
    torch.save(sd, os.path.join(d, "pytorch_model.bin"))
    save_mamba_ssm_config(model, d, raw_vocab, ssm_cfg)


def tf5():
    model = Mamba2ForCausalLM.from_pretrained(os.path.join(HERE, "hf-tied"), dtype=torch.float32).eval()
    d = os.path.join(HERE, "ssm-tied")  # the same weights as hf-tied: test_checkpoint compares with its golden
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    save_state_dict_mamba_ssm(model, d, torch.float32)
    for name, dtype in [("fp16", torch.float16), ("bf16", torch.bfloat16)]:
        d = fresh(os.path.join(WILD, "ssm-statedict-" + name))
        save_state_dict_mamba_ssm(model, d, dtype)
        write_golden(d, through(model, dtype), f"torch.save(module.state_dict()), mamba_ssm names, {name}")
        d = fresh(os.path.join(WILD, "hf5-" + name))
        Mamba2ForCausalLM.from_pretrained(os.path.join(HERE, "hf-tied"), dtype=dtype).save_pretrained(d)
        write_golden(d, through(model, dtype), f"transformers {transformers.__version__} save_pretrained, {name}")
    d = fresh(os.path.join(WILD, "hf5-sharded"))
    model.save_pretrained(d, max_shard_size="30KB")
    assert os.path.exists(os.path.join(d, "model.safetensors.index.json"))
    write_golden(d, model, f"transformers {transformers.__version__} save_pretrained, fp32, sharded")


def tf4():
    torch.manual_seed(SEED + 4)
    model = build("hf4", 1, False, 64)  # untied, built by transformers 4 itself
    for name, dtype, shard in [("fp32", torch.float32, None), ("bf16", torch.bfloat16, None),
                               ("sharded", torch.float32, "30KB")]:
        d = fresh(os.path.join(WILD, "hf4-bin-" + name))
        m = Mamba2ForCausalLM(model.config).to(dtype).eval()
        m.load_state_dict(model.state_dict())
        kw = {"max_shard_size": shard} if shard else {}
        m.save_pretrained(d, safe_serialization=False, **kw)
        want = "pytorch_model.bin.index.json" if shard else "pytorch_model.bin"
        assert os.path.exists(os.path.join(d, want)), os.listdir(d)
        with open(os.path.join(d, "WRITER"), "w") as f:
            f.write(f"transformers {transformers.__version__} save_pretrained(safe_serialization=False), {name}\n")


def tf4_golden():
    """Logits of transformers 5 reading each transformers 4 file (upcast to fp32)."""
    for name in ["fp32", "bf16", "sharded"]:
        d = os.path.join(WILD, "hf4-bin-" + name)
        model = Mamba2ForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
        with open(os.path.join(d, "WRITER")) as f:
            writer = f.read().strip()
        write_golden(d, model, writer + f"; logits by transformers {transformers.__version__} reading it")


if __name__ == "__main__":
    section = sys.argv[1] if len(sys.argv) > 1 else ""
    major = int(transformers.__version__.split(".")[0])
    if section == "tf5" and major >= 5:
        tf5()
    elif section == "tf4" and major == 4:
        tf4()
    elif section == "tf4-golden" and major >= 5:
        tf4_golden()
    else:
        sys.exit(f"usage: make_wild_checkpoints.py tf5|tf4|tf4-golden (with that transformers major; this is {transformers.__version__})")
