"""bf16_sensitivity.py — how much bf16 moves a model's logits in transformers itself (issue 55), to read
statescope's bf16 accuracy against: fp32 logits vs (a) the weights rounded to bf16 with fp32 math and
(b) torch's CPU autocast bf16, on 256 seeded random tokens, one thread. A model whose logits move by
whole units under (a) is too sensitive for a bf16 accuracy check (random-initialised checkpoints are).
Dev mode only (needs transformers). Usage: .venv/bin/python bench/bf16_sensitivity.py SAVE_PRETRAINED_DIR
"""
import sys

import torch
from transformers import Mamba2ForCausalLM

torch.set_num_threads(1)
m = Mamba2ForCausalLM.from_pretrained(sys.argv[1], torch_dtype=torch.float32).eval()
torch.manual_seed(0)
ids = torch.randint(0, m.config.vocab_size, (1, 256))
with torch.no_grad():
    a = m(ids).logits
    saved = {k: v.clone() for k, v in m.state_dict().items()}
    for k, v in m.state_dict().items():
        if v.dim() == 2 and "embed" not in k:
            v.copy_(v.bfloat16().float())
    b = m(ids).logits
    m.load_state_dict(saved)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        c = m(ids).logits.float()
print(f"max |logit| {a.abs().max().item():.2f}; weights rounded to bf16 (fp32 math): max |diff| "
      f"{(a - b).abs().max().item():.3f}; torch autocast bf16: max |diff| {(a - c).abs().max().item():.3f}")
