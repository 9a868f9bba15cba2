// test_h5file.cpp — the HDF5 wrapper (round trips, type conversion, attributes, errors) and the
// experiment-file readers' promises.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/store/experiment_store.h"
#include "core/store/h5file.h"
#include "tests/error_text.h"
#include "tests/scratch.h"
#include "core/analyses/passkey/record.h"

using namespace statescope;

TEST(H5File, RoundTripAndConversion) {
  const auto path = (std::filesystem::temp_directory_path() / "ss_h5.h5").string();
  {
    H5File f(path, H5File::Mode::Create);
    std::vector<float> a(2 * 3 * 5);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i);
    f.write("group/sub/a", a.data(), {2, 3, 5});
    std::vector<int64_t> ids{1, 2, 3, 40000000000LL};
    f.write("ids", ids.data(), {2, 2});
    f.set_attr("/", "format", "statescope");
    f.set_attr("group", "note", "héllo");
  }
  H5File f(path, H5File::Mode::Read);
  EXPECT_TRUE(f.has("group/sub/a"));
  EXPECT_FALSE(f.has("group/nope/a"));
  std::vector<int64_t> d;
  auto a = f.read_f64("group/sub/a", &d);
  EXPECT_EQ(d, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_DOUBLE_EQ(a[29], 14.5);
  EXPECT_EQ(f.read_i64("ids")[3], 40000000000LL);
  EXPECT_TRUE(f.is_integer("ids"));
  EXPECT_FALSE(f.is_integer("group/sub/a"));
  EXPECT_EQ(f.attr("/", "format"), "statescope");
  EXPECT_EQ(f.attr("group", "note"), "héllo");
  std::filesystem::remove(path);
}

TEST(H5File, Errors) {
  EXPECT_THROW(H5File("/nonexistent/f.h5", H5File::Mode::Read), Error);
  const auto path = (std::filesystem::temp_directory_path() / "ss_not_h5.h5").string();
  std::ofstream(path) << "plain text";
  try {
    H5File f(path, H5File::Mode::Read);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(H5File, ADeclaredButUnwrittenDatasetIsRefusedBeforeAllocating) {
  // 8 KB on disk declaring 2 x 5e8 doubles (tests/golden/hostile/make_hostile.py): the desktop app
  // died of std::bad_alloc opening it. Now a named error, and normal datasets still read.
  const std::string path = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/hostile/sparse.h5";
  H5File f(path, H5File::Mode::Read);
  EXPECT_EQ(f.dims("baseline/ppl/nll"), (std::vector<int64_t>{2, 500000000}));
  try {
    f.read_f64("baseline/ppl/nll");
    FAIL() << "read 8 GB that the file does not hold";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("dataset 'baseline/ppl/nll' declares 1000000000 elements (8000000000 bytes) but the file stores"),
              std::string::npos) << m;
  }
  const auto tmp = (std::filesystem::temp_directory_path() / "ss_zeros.h5").string();
  {
    H5File w(tmp, H5File::Mode::Create);
    std::vector<double> zeros(1 << 18, 0.0);  // 2 MB of zeros compresses ~1000x: still read
    w.write("z", zeros.data(), {1 << 18});
  }
  H5File r(tmp, H5File::Mode::Read);
  EXPECT_EQ(r.read_f64("z").size(), size_t{1} << 18);
}

// The readers keep the promises of results.h (sizes match the axes, number attributes are whole
// numbers): a file that breaks one is refused naming the run and the dataset, never handed on.
TEST(ExperimentReader, InconsistentResultsAreRefusedNamingTheDataset) {
  const auto path = statescope::test::scratch("statescope_reader_promises.h5");
  auto make = [&](const std::vector<double>& accuracy, const std::string& samples) {
    H5File f(path, H5File::Mode::Create);
    std::vector<int64_t> lengths{64, 128};
    std::vector<double> depths{0, 0.5, 1};
    f.write("r/passkey/length", lengths.data(), {2});
    f.write("r/passkey/depth", depths.data(), {3});
    f.write("r/passkey/accuracy", accuracy.data(), {static_cast<int64_t>(accuracy.size())});
    f.write("r/passkey/digit_accuracy", accuracy.data(), {static_cast<int64_t>(accuracy.size())});
    f.set_attr("r/passkey", "samples", samples);
  };
  make(std::vector<double>(6, 0.5), "10");
  {
    H5File f(path, H5File::Mode::Read);
    auto r = read_passkey(f, "r");
    EXPECT_EQ(r.accuracy.size(), 6u);
    EXPECT_EQ(r.samples, 10);
  }
  auto why = [&] {  // what reading the run's passkey group says ("(no error)": accepted)
    H5File f(path, H5File::Mode::Read);
    return statescope::test::error_of([&] { read_passkey(f, "r"); });
  };
  make(std::vector<double>(5, 0.5), "10");  // 5 values for 2 lengths x 3 depths
  const std::string m = why();
  EXPECT_NE(m.find("run 'r'"), std::string::npos) << m;
  EXPECT_NE(m.find("passkey/accuracy holds 5 values"), std::string::npos) << m;
  EXPECT_NE(m.find("[length, depth] = 6"), std::string::npos) << m;
  make(std::vector<double>(6, 0.5), "ten");
  EXPECT_NE(why().find("attribute 'samples' of passkey is 'ten'"), std::string::npos) << why();
}
