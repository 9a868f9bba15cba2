// test_progress.cpp — the CLI's progress line formats (app/cli/progress.h).
#include <gtest/gtest.h>

#include <cmath>

#include "app/cli/progress.h"

TEST(Progress, EtaIsReadableOrSaysItIsUnknown) {
  using statescope::cli::fmt_eta;
  EXPECT_EQ(fmt_eta(187), "3m07s");
  EXPECT_EQ(fmt_eta(3900), "1h05m");
  EXPECT_EQ(fmt_eta(-3), "?");
  EXPECT_EQ(fmt_eta(std::nan("")), "?");
  EXPECT_EQ(fmt_eta(1e12), "?");  // printed -2147483648h before
}
