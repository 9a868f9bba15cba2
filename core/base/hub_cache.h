// hub_cache.h — models and datasets in the local Hugging Face cache, found offline.
//
// The layout is huggingface_hub's (what `huggingface-cli download`, `hf download`, `snapshot_download`
// and `from_pretrained` write):
//   <cache>/models--<owner>--<name>/refs/<revision>         a text file: the commit hash
//   <cache>/models--<owner>--<name>/snapshots/<commit>/...  the files (symlinks into ../../blobs/)
//   <cache>/datasets--<owner>--<name>/...                   the same for datasets
// <cache> is the first of $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE, $HF_HOME/hub,
// $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub, as huggingface_hub decides it.
// Nothing is ever downloaded: an id that is not there is an error that says where it looked and how
// to fetch it. No LibTorch, no Qt.
#pragma once
#include <string>
#include <vector>

namespace statescope {

enum class HubRepoType { Model, Dataset };

struct HubCache {
  std::string dir;     // the cache folder (it may not exist)
  std::string source;  // how it was chosen: "$HF_HUB_CACHE", "$HF_HOME/hub", "~/.cache/huggingface/hub", ...
};
HubCache hub_cache();

// "owner/name" or "owner/name@revision", by the Hub's rules for repository ids (letters, digits, '-',
// '_', '.'; no "--" or ".."; at most 96 characters). Says nothing about whether it is cached.
bool is_hub_id(const std::string& text);

struct HubSnapshot {
  std::string id;        // "state-spaces/mamba2-130m"
  std::string revision;  // as asked ("main" when none was given)
  std::string commit;    // the snapshot's commit hash
  std::string dir;       // <cache>/models--state-spaces--mamba2-130m/snapshots/<commit>
};

// Resolves "owner/name[@revision]" (a branch or tag in refs/, or a commit hash with a snapshot) to
// its snapshot folder; the repository folder, the ref and the snapshot's every link must resolve
// inside the cache (a hostile cache is refused by name, its files' contents never quoted). Throws Error naming the id, the folder it looked in, the revisions that are
// cached, and the command that downloads it.
HubSnapshot resolve_hub_snapshot(const std::string& id_at_revision, HubRepoType type = HubRepoType::Model);

// Every repository of `type` in the cache, as (id, repository folder), sorted by id.
std::vector<std::pair<std::string, std::string>> list_hub_repos(HubRepoType type);

// The revisions cached for the repository folder: each ref (name -> commit) that has its snapshot.
// refs/ and its files are read only where they resolve inside the repository folder.
std::vector<std::pair<std::string, std::string>> hub_refs(const std::string& repo_dir);

// The names in the repository's snapshots/ (empty when it leads outside the repository), sorted.
std::vector<std::string> hub_snapshot_names(const std::string& repo_dir);

// Containment (core/base/contained.h): throws Error naming the entry unless snapshot folder `dir` and
// every link under it resolve inside the repository folder `repo_dir` (where its blobs are).
void check_hub_snapshot(const std::string& repo_dir, const std::string& dir);

// The repository folder of a cache snapshot folder (".../models--o--n/snapshots/<commit>") or of a
// folder inside one, or "".
std::string hub_repo_of_snapshot(const std::string& dir);

}  // namespace statescope
