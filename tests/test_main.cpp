// test_main.cpp — GoogleTest entry for LibTorch tests: one intra-op thread (see core/compute/runtime.h).
#include <gtest/gtest.h>

#include "core/compute/runtime.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  statescope::configure_threads(0);
  return RUN_ALL_TESTS();
}
