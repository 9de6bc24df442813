// SPDX-License-Identifier: MIT
// sha256_test.cpp - SHA-256 digests against FIPS 180-4's examples, and hashing in a fork() child
// while parent threads hash.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/bytes/sha256.h"

namespace hipacm {
namespace {

std::string digest_of(const std::string& text) { return sha256_hex(text.data(), text.size()); }

TEST(Sha256, MatchesTheStandardsExamples) {
  EXPECT_EQ(digest_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(digest_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(digest_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(digest_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashLikeTheWholeAndTheObjectStartsAgainAfterHex) {
  const std::string text = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  Sha256 sha;
  for (std::size_t at = 0; at < text.size(); at += 7)
    sha.add_bytes(text.data() + at, std::min<std::size_t>(7, text.size() - at));
  EXPECT_EQ(sha.hex(), digest_of(text));
  sha.add_bytes("abc", 3);
  EXPECT_EQ(sha.hex(), digest_of("abc"));
}

TEST(Sha256, FieldsAreLengthPrefixed) {
  Sha256 ab_c, a_bc;
  ab_c.add_field("ab");
  ab_c.add_field("c");
  a_bc.add_field("a");
  a_bc.add_field("bc");
  EXPECT_NE(ab_c.hex(), a_bc.hex());
}

// A host may fork() at any moment, for instance while another of its threads is inside the first
// hash of the process (a library's lazy initialization) or any later one. The child must still
// hash: with a hash that took a process-wide lock, it would inherit that lock held by a thread
// that does not exist in it and hang. alarm() turns such a hang into a failure.
TEST(Sha256Fork, AChildHashesWhileParentThreadsWereHashing) {
#if defined(__SANITIZE_THREAD__)
  // The child allocates (the hex string) while parent threads allocate, which TSan's runtime does
  // not support after a multi-threaded fork.
  GTEST_SKIP() << "the sanitizer runtime does not support allocation after a multi-threaded fork";
#endif
  constexpr int kForks = 200;
  std::atomic<bool> stop{false};
  std::vector<std::thread> hashers;
  for (int t = 0; t < 3; ++t)
    hashers.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
        Sha256 sha;
        sha.add_field("kernel source");
        if (sha.hex().size() != 64) std::abort();
      }
    });
  int hung = 0, wrong = 0;
  for (int i = 0; i < kForks; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::alarm(20);
      ::_exit(digest_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
                  ? 0
                  : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) ++hung;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++wrong;
  }
  stop.store(true, std::memory_order_relaxed);
  for (std::thread& t : hashers) t.join();
  EXPECT_EQ(hung, 0) << "children that hung while hashing";
  EXPECT_EQ(wrong, 0) << "children that did not hash correctly";
}

}  // namespace
}  // namespace hipacm
