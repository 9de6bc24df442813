// SPDX-License-Identifier: MIT
// order_intake.h - the compile service's intake of orders: connections from its user, each read
// side by side with the others under its own deadline.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "support/files/unique_fd.h"
#include "worker/service/service_common.h"

namespace hipacm::backend::service_internal {

/// Connections whose order is still arriving. An orderer writes its order right after connecting;
/// one that stalls is dropped, not waited on, and idle connections never add up to a delay for
/// anyone else's order.
class OrderIntake {
 public:
  /// Takes each whole order, with the connection it came on (where the answer goes).
  using OnOrder = std::function<void(UniqueFd connection, sw::MessageReader& reader)>;

  /// Each connection accepted and each whole order moves *last_activity to now.
  OrderIntake(Clock::time_point* last_activity, OnOrder on_order);

  /// Accepts every connection waiting on `listener`: one of another user is closed unanswered,
  /// and beyond the cap the oldest pending one is dropped.
  void accept_all(int listener);
  /// Reads what the pending connection `fd` sent; a whole order is handled, a bad one dropped.
  void read(int fd);
  /// Drops pending connections whose deadline passed; returns the earliest deadline left.
  std::optional<Clock::time_point> drop_overdue();

  bool empty() const { return pending_.empty(); }
  /// The descriptors of the pending connections, to poll.
  std::vector<int> descriptors() const;

 private:
  /// A connection whose order is still arriving.
  struct PendingOrder {
    UniqueFd connection;
    sw::MessageReader reader;
    Clock::time_point deadline;  ///< dropped unanswered if the order is not whole by then
  };

  Clock::time_point* const last_activity_;
  const OnOrder on_order_;
  std::map<int, PendingOrder> pending_;  ///< by descriptor
};

}  // namespace hipacm::backend::service_internal
