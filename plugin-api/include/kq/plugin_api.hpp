// The whole host/arm contract. Plugins include this and nothing from core/.
#pragma once
#include "kq/abi.hpp"
#include "kq/arm.hpp"
#include "kq/build_info.hpp"
#include "kq/contract.hpp"
#include "kq/export.hpp"
#include "kq/expr.hpp"
#include "kq/guarded_arm.hpp"
#include "kq/half.hpp"
#include "kq/op_spec.hpp"
#include "kq/status.hpp"
#include "kq/tensor.hpp"
