// find_key.h — the entry of a registry (a list of descriptors with a `key`) whose key is `key`, or
// null. No LibTorch.
#pragma once
#include <string>

namespace statescope {

template <class List>
const typename List::value_type* find_key(const List& all, const std::string& key) {
  for (const auto& x : all)
    if (x.key == key) return &x;
  return nullptr;
}

}  // namespace statescope
