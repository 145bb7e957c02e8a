#include "scenario/scenario.hpp"

#include <sstream>
#include <stdexcept>

#include "rbc/error.hpp"
#include "rbc/range.hpp"
#include "scenario/tokens.hpp"

namespace props {

namespace {

template <class E>
struct Names {
  E value;
  const char* text;
};

constexpr Names<Coll> kCollNames[] = {
    {Coll::kBcast, "bcast"},         {Coll::kReduce, "reduce"},
    {Coll::kAllreduce, "allreduce"}, {Coll::kScan, "scan"},
    {Coll::kExscan, "exscan"},       {Coll::kScanAndBcast, "scanbcast"},
    {Coll::kGather, "gather"},       {Coll::kGatherv, "gatherv"},
    {Coll::kAllgather, "allgather"}, {Coll::kAllgatherv, "allgatherv"},
    {Coll::kBarrier, "barrier"},     {Coll::kGatherm, "gatherm"},
};
constexpr Names<Type> kTypeNames[] = {
    {Type::kInt, "i"}, {Type::kLong, "l"}, {Type::kDouble, "d"}, {Type::kGapped, "g"}, {Type::kMatrix, "m"},
};
constexpr Names<Op> kOpNames[] = {
    {Op::kSum, "sum"}, {Op::kMax, "max"}, {Op::kMin, "min"}, {Op::kBxor, "bxor"}, {Op::kUser, "user"},
};
constexpr Names<Bad> kBadNames[] = {
    {Bad::kSplitStride, "splitstride"},   {Bad::kSplitReversed, "splitreversed"},
    {Bad::kSplitTooLarge, "splitlarge"},  {Bad::kJanusGap, "janusgap"},
    {Bad::kJanusBound, "janusbound"},     {Bad::kRootLarge, "rootlarge"},
    {Bad::kRootNegative, "rootnegative"}, {Bad::kCountNegative, "countnegative"},
    {Bad::kTagLarge, "taglarge"},         {Bad::kTagNegative, "tagnegative"},
    {Bad::kAnyTag, "anytag"},             {Bad::kDestLarge, "destlarge"},
    {Bad::kNullType, "nulltype"},         {Bad::kNullOp, "nullop"},
    {Bad::kNonMember, "nonmember"},
};

template <class E, std::size_t N>
const char* lookup_name(const Names<E> (&table)[N], E value) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.text;
  }
  return "?";
}

template <class E, std::size_t N>
E lookup_value(const Names<E> (&table)[N], const std::string& text, const char* what) {
  for (const auto& entry : table) {
    if (text == entry.text) return entry.value;
  }
  throw std::invalid_argument(std::string("unknown ") + what + " '" + text + "'");
}

std::vector<int> fields(const std::string& value, std::size_t first, std::size_t n,
                        const std::string& token) {
  const auto parts = split_on(value, '.');
  if (parts.size() != first + n) {
    throw std::invalid_argument("token '" + token + "' needs " + std::to_string(first + n) +
                                " dot-separated fields");
  }
  std::vector<int> out;
  for (std::size_t i = first; i < parts.size(); ++i) out.push_back(to_int(parts[i], token));
  return out;
}

std::string step_token(const Step& s) {
  switch (s.kind) {
    case Step::kSplit:
      return "s" + std::to_string(s.a) + "." + std::to_string(s.b) + "." + std::to_string(s.stride);
    case Step::kJanusLeft:
      return "l" + std::to_string(s.a) + "." + std::to_string(s.b);
    case Step::kJanusRight:
      return "r" + std::to_string(s.a) + "." + std::to_string(s.b);
  }
  return "?";
}

CommSpec parse_comm(const std::string& value, const std::string& token) {
  CommSpec comm;
  if (value == "w") return comm;
  if (value == "h") {
    comm.handle = 1;
    return comm;
  }
  for (const std::string& part : split_on(value, '/')) {
    if (part.empty()) throw std::invalid_argument("empty step in token '" + token + "'");
    if (part == "h") {
      comm.handle = 1;
      continue;
    }
    Step step;
    const auto nums = fields(part.substr(1), 0, part[0] == 's' ? 3 : 2, token);
    switch (part[0]) {
      case 's':
        step = {Step::kSplit, nums[0], nums[1], nums[2]};
        break;
      case 'l':
        step = {Step::kJanusLeft, nums[0], nums[1], 1};
        break;
      case 'r':
        step = {Step::kJanusRight, nums[0], nums[1], 1};
        break;
      default:
        throw std::invalid_argument("unknown step '" + part + "' in token '" + token + "'");
    }
    comm.steps.push_back(step);
  }
  return comm;
}

// The range of `comm` after each step, in world ranks; nullopt if a step does not fit.
std::optional<std::vector<rbc::Range>> chain(const CommSpec& comm, int np) {
  std::vector<rbc::Range> ranges{rbc::Range(0, np - 1)};
  try {
    for (const Step& s : comm.steps) {
      const rbc::Range& r = ranges.back();
      switch (s.kind) {
        case Step::kSplit:
          ranges.push_back(r.sub(s.a, s.b, s.stride));
          break;
        case Step::kJanusLeft:
        case Step::kJanusRight:
          if (s.a < 0 || s.a >= r.size() || s.b < 0 || s.b >= r.size() || s.b > s.a + 1) {
            return std::nullopt;
          }
          ranges.push_back(s.kind == Step::kJanusLeft ? r.sub(0, s.a) : r.sub(s.b, r.size() - 1));
          break;
      }
    }
  } catch (const rbc::Error&) {
    return std::nullopt;
  }
  return ranges;
}

}  // namespace

const char* name(Coll c) { return lookup_name(kCollNames, c); }
const char* name(Type t) { return lookup_name(kTypeNames, t); }
const char* name(Op o) { return lookup_name(kOpNames, o); }
const char* name(Bad b) { return lookup_name(kBadNames, b); }

bool is_reduction(Coll c) {
  return c == Coll::kReduce || c == Coll::kAllreduce || c == Coll::kScan || c == Coll::kExscan ||
         c == Coll::kScanAndBcast;
}

std::vector<Op> ops_for(Type t) {
  switch (t) {
    case Type::kInt:
    case Type::kLong:
      return {Op::kSum, Op::kMax, Op::kMin, Op::kBxor};
    case Type::kDouble:
      return {Op::kSum, Op::kMax, Op::kMin};
    case Type::kGapped:
    case Type::kMatrix:
      return {Op::kUser};
  }
  return {};
}

std::optional<std::vector<int>> members_of(const CommSpec& comm, int np) {
  const auto ranges = chain(comm, np);
  if (!ranges) return std::nullopt;
  std::vector<int> members;
  for (int i = 0; i < ranges->back().size(); ++i) members.push_back(ranges->back().at(i));
  return members;
}

void validate(const Scenario& s) {
  if (s.np < 1) throw std::invalid_argument("np must be >= 1");
  if (s.comms.empty()) throw std::invalid_argument("no communicators");
  std::vector<int> sizes;
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    const auto m = members_of(s.comms[i], s.np);
    if (!m) throw std::invalid_argument("communicator " + std::to_string(i) + " does not fit np");
    sizes.push_back(static_cast<int>(m->size()));
  }
  auto comm_size = [&](int comm, const std::string& what) {
    if (comm < 0 || comm >= static_cast<int>(sizes.size())) {
      throw std::invalid_argument(what + ": no communicator " + std::to_string(comm));
    }
    return sizes[comm];
  };
  for (const CollOp& o : s.colls) {
    const int size = comm_size(o.comm, name(o.kind));
    if (o.root < 0 || o.root >= size) throw std::invalid_argument(std::string(name(o.kind)) + ": bad root");
    if (o.count < 0) throw std::invalid_argument(std::string(name(o.kind)) + ": negative count");
    if (is_reduction(o.kind)) {
      bool ok = false;
      for (Op op : ops_for(o.type)) ok = ok || op == o.op;
      if (!ok) throw std::invalid_argument(std::string(name(o.kind)) + ": op does not fit the type");
    }
    if (o.kind == Coll::kGatherm && o.type != Type::kInt) {
      throw std::invalid_argument("gatherm: only type i");
    }
  }
  for (const Message& m : s.messages) {
    const int size = comm_size(m.comm, "message");
    if (m.src < 0 || m.src >= size || m.dst < 0 || m.dst >= size) {
      throw std::invalid_argument("message: bad source or destination");
    }
    if (m.tag < 0 || m.tag > 32767) throw std::invalid_argument("message: bad tag");
    if (m.count < 1) throw std::invalid_argument("message: count must be >= 1");
  }
  for (const BadCall& b : s.bad) comm_size(b.comm, name(b.kind));
}

std::vector<std::string> to_tokens(const Scenario& s) {
  std::vector<std::string> t;
  t.push_back("np=" + std::to_string(s.np));
  t.push_back("seed=" + std::to_string(s.seed));
  for (const CommSpec& c : s.comms) {
    std::string v;
    if (c.handle == 1) v = "h";
    for (const Step& step : c.steps) v += (v.empty() ? "" : "/") + step_token(step);
    t.push_back("c=" + (v.empty() ? std::string("w") : v));
  }
  for (const CollOp& o : s.colls) {
    t.push_back("o=" + std::string(name(o.kind)) + "." + std::to_string(o.comm) + "." +
                std::to_string(o.root) + "." + std::to_string(o.count) + "." + name(o.type) + "." +
                name(o.op) + "." + (o.nonblocking ? "n" : "b") + "." + std::to_string(o.round));
  }
  for (const Message& m : s.messages) {
    const char* mode = m.any_source ? (m.blocking ? "A" : "a") : (m.blocking ? "b" : "n");
    t.push_back("m=" + std::to_string(m.comm) + "." + std::to_string(m.src) + "." +
                std::to_string(m.dst) + "." + std::to_string(m.tag) + "." +
                std::to_string(m.count) + "." + mode + "." + std::to_string(m.round));
  }
  for (const BadCall& b : s.bad) t.push_back("e=" + std::string(name(b.kind)) + "." + std::to_string(b.comm));
  return t;
}

Scenario from_tokens(const std::vector<std::string>& tokens) {
  Scenario s;
  s.comms.clear();
  for (const std::string& token : tokens) {
    const auto [key, value] = split_token(token);
    if (key == "np") {
      s.np = to_int(value, token);
    } else if (key == "seed") {
      s.seed = std::stoull(value);
    } else if (key == "c") {
      s.comms.push_back(parse_comm(value, token));
    } else if (key == "o") {
      const auto parts = split_on(value, '.');
      if (parts.size() != 8) throw std::invalid_argument("token '" + token + "' needs 8 fields");
      CollOp o;
      o.kind = lookup_value(kCollNames, parts[0], "collective");
      o.comm = to_int(parts[1], token);
      o.root = to_int(parts[2], token);
      o.count = to_int(parts[3], token);
      o.type = lookup_value(kTypeNames, parts[4], "type");
      o.op = lookup_value(kOpNames, parts[5], "op");
      if (parts[6] != "n" && parts[6] != "b") throw std::invalid_argument("token '" + token + "': mode must be n or b");
      o.nonblocking = parts[6] == "n";
      o.round = to_int(parts[7], token);
      s.colls.push_back(o);
    } else if (key == "m") {
      const auto parts = split_on(value, '.');
      if (parts.size() != 7) throw std::invalid_argument("token '" + token + "' needs 7 fields");
      Message m;
      m.comm = to_int(parts[0], token);
      m.src = to_int(parts[1], token);
      m.dst = to_int(parts[2], token);
      m.tag = to_int(parts[3], token);
      m.count = to_int(parts[4], token);
      const std::string& mode = parts[5];
      if (mode != "n" && mode != "a" && mode != "b" && mode != "A") {
        throw std::invalid_argument("token '" + token + "': receive mode must be n, a, b or A");
      }
      m.any_source = mode == "a" || mode == "A";
      m.blocking = mode == "b" || mode == "A";
      m.round = to_int(parts[6], token);
      s.messages.push_back(m);
    } else if (key == "e") {
      const auto parts = split_on(value, '.');
      if (parts.size() != 2) throw std::invalid_argument("token '" + token + "' needs 2 fields");
      s.bad.push_back({lookup_value(kBadNames, parts[0], "bad call"), to_int(parts[1], token)});
    } else {
      throw std::invalid_argument("unknown token '" + token + "'");
    }
  }
  if (s.comms.empty()) s.comms.push_back(CommSpec{});
  validate(s);
  return s;
}

std::string join(const std::vector<std::string>& tokens) {
  std::string out;
  for (const std::string& t : tokens) out += (out.empty() ? "" : " ") + t;
  return out;
}

std::string describe(const Scenario& s) {
  std::ostringstream out;
  out << "np=" << s.np << ", " << s.comms.size() << " communicators, " << s.colls.size()
      << " collectives, " << s.messages.size() << " messages, " << s.bad.size()
      << " bad calls: " << join(to_tokens(s));
  return out.str();
}

}  // namespace props
