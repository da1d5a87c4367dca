#pragma once
// What the papers claim and the registry does not judge, each with the reason.
#include <string>
#include <vector>

namespace attnlab {

struct LeftOutClaim {
  std::string source, statement, reason;
};

const std::vector<LeftOutClaim>& left_out_claims();

}  // namespace attnlab
