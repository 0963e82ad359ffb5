// The result of every call across the plugin boundary. Arms return a Status; they never throw.
#pragma once
#include <exception>
#include <new>
#include <string>
#include <utility>

namespace kq {

class Status {
 public:
  enum class Code { ok, unsupported, error };

  static Status ok() { return Status(Code::ok, {}); }
  static Status unsupported(std::string reason) {
    return Status(Code::unsupported, std::move(reason));
  }
  static Status error(std::string message) { return Status(Code::error, std::move(message)); }

  Code code() const { return code_; }
  bool is_ok() const { return code_ == Code::ok; }
  bool is_unsupported() const { return code_ == Code::unsupported; }
  bool is_error() const { return code_ == Code::error; }
  // The reason (unsupported) or the message (error); empty when ok.
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_;
  std::string message_;
};

// Inside a catch block: the exception in flight as an error Status, so that none crosses the
// plugin boundary. Arms end each interface method with
//   } catch (...) { return kq::status_from_current_exception("prepare()"); }
inline Status status_from_current_exception(const std::string& who) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Status::error(who + ": out of memory");
  } catch (const std::exception& e) {
    return Status::error(who + ": " + e.what());
  } catch (...) {
    return Status::error(who + ": unknown exception");
  }
}

inline const char* to_string(Status::Code c) {
  switch (c) {
    case Status::Code::ok:
      return "ok";
    case Status::Code::unsupported:
      return "unsupported";
    case Status::Code::error:
      return "error";
  }
  return "?";
}

}  // namespace kq
