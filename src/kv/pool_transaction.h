// kv/pool_transaction.h: RAII guard that makes a group of pool changes
// all-or-nothing.
//
//   PoolTransaction tx(pool);
//   pool.touch(hit); pool.allocate(n, ids); ...
//   tx.commit();            // keep them
//   // leaving scope without commit() (an early return, an exception)
//   // restores the pool exactly as it was at construction.
#pragma once

#include "kv/block_pool.h"

namespace folio::kv {

class PoolTransaction {
 public:
  explicit PoolTransaction(BlockPool& pool) : pool_(&pool) { pool_->begin_transaction(); }
  PoolTransaction(const PoolTransaction&) = delete;
  PoolTransaction& operator=(const PoolTransaction&) = delete;
  ~PoolTransaction() {
    if (pool_ != nullptr) pool_->rollback_transaction();
  }

  void commit() {
    pool_->commit_transaction();
    pool_ = nullptr;
  }

 private:
  BlockPool* pool_;
};

}  // namespace folio::kv
