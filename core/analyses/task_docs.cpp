// task_docs.cpp — padding and stacking task examples into training documents.
#include "core/analyses/task_docs.h"

#include "core/base/error.h"

namespace statescope {

std::vector<Document> task_documents(const std::vector<TaskExample>& examples, int64_t T, int64_t per_doc,
                                     int32_t pad, const std::string& name) {
  if (T < 2) throw Error(name + ": training window T must be >= 2, got " + std::to_string(T));
  if (per_doc < 1) throw Error(name + ": examples per document must be >= 1, got " + std::to_string(per_doc));
  std::vector<Document> docs;
  std::vector<int32_t> ids;
  std::vector<uint8_t> mask;
  for (size_t i = 0; i < examples.size(); ++i) {
    const auto& e = examples[i];
    if (e.ids.empty() || static_cast<int64_t>(e.ids.size()) > T || e.mask.size() != e.ids.size())
      throw Error(name + " example " + std::to_string(i) + ": " + std::to_string(e.ids.size()) + " tokens and " +
                  std::to_string(e.mask.size()) + " mask entries (needs 1..T = " + std::to_string(T) + " of each)");
    ids.insert(ids.end(), e.ids.begin(), e.ids.end());
    mask.insert(mask.end(), e.mask.begin(), e.mask.end());
    ids.resize(ids.size() + (T - e.ids.size()), pad);
    mask.resize(ids.size(), 0);
    const bool last = i + 1 == examples.size();
    if ((i + 1) % static_cast<size_t>(per_doc) == 0 || last) {
      ids.push_back(pad);  // the last window's last target
      mask.push_back(0);
      const size_t first = i + 1 - ids.size() / static_cast<size_t>(T);
      Document d{name + " " + std::to_string(first) + ".." + std::to_string(i), TokenSpan(std::move(ids))};
      d.loss_mask = std::move(mask);
      docs.push_back(std::move(d));
      ids.clear();
      mask.clear();
    }
  }
  return docs;
}

}  // namespace statescope
