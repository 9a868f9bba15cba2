// pch.cpp — the translation unit that builds the precompiled header (pch.h); it holds no code.
