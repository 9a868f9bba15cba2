// probe.cpp — compiled by tests/layering/check.sh against one layer's targets, once as it is (must
// compile) and once with STATESCOPE_PROBE_TORCH (a LibTorch include: must fail to compile in every
// LibTorch-free layer, and compile in model/). Proves the build, not a comment, keeps the layering.
#ifdef STATESCOPE_PROBE_TORCH
#include <c10/macros/Macros.h>  // a LibTorch header, light enough to compile in a second
#endif
#ifdef STATESCOPE_PROBE_QT
#include <QtCore/QObject>
#endif

int statescope_layering_probe() { return 0; }
