// SPDX-License-Identifier: MIT
// nearest_name.cpp - the known names closest to a mistyped one, by edit distance.
#include "support/nearest_name.h"

#include <algorithm>

namespace hipacm {
namespace {

bool same_characters(std::string_view a, std::string_view b) {
  std::string sorted_a(a), sorted_b(b);
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_b.begin(), sorted_b.end());
  return sorted_a == sorted_b;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: a swap of neighbours looks two rows back.
  std::vector<std::size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t replace = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[b.size()];
}

std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& known, std::size_t limit) {
  std::vector<std::string> best;
  if (typed.empty() || typed.size() > kMaxNameLength) return best;
  const std::size_t allowed = typed.size() <= 4 ? 1 : typed.size() <= 8 ? 2 : 3;
  std::size_t best_distance = std::min(allowed, typed.size() - 1);
  for (const std::string& name : known) {
    if (name == typed) return {};
    if (name.size() > kMaxNameLength) continue;
    const std::size_t distance = edit_distance(typed, name);
    if (distance > best_distance) continue;
    if (distance < best_distance) {
      best.clear();
      best_distance = distance;
    }
    if (distance == best_distance && std::find(best.begin(), best.end(), name) == best.end())
      best.push_back(name);
  }
  if (std::any_of(best.begin(), best.end(),
                  [&](const std::string& name) { return same_characters(typed, name); }))
    std::erase_if(best, [&](const std::string& name) { return !same_characters(typed, name); });
  if (best.size() > limit) best.resize(limit);
  return best;
}

std::string one_of(const std::vector<std::string>& names, std::string_view quote) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += std::string(quote) + names[i] + std::string(quote);
  }
  return text;
}

}  // namespace hipacm
