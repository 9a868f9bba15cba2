// pch.h — the one precompiled header: LibTorch is costly to parse (~20 CPU-s per file), so every
// LibTorch-including target reuses this. Never included by Qt-visible code.
#pragma once
#include <torch/torch.h>
