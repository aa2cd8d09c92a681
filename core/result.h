// Status and Result<T>: how every fallible operation in SchedLab reports failure.
// Mirrors std::expected so that it can become an alias under C++23. No exception
// ever crosses a module boundary; errors travel as values with a message that
// names the file and the line or byte offset where things went wrong.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace core {

/// An error message, already formatted for a person: "FILE: byte offset N: what".
class Error {
 public:
  explicit Error(std::string message) : m_message(std::move(message)) {}
  const std::string& message() const { return m_message; }

 private:
  std::string m_message;
};

/// Success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : m_error(std::move(error.message())), m_ok(false) {}  // NOLINT: implicit by design

  static Status ok() { return {}; }
  bool isOk() const { return m_ok; }
  explicit operator bool() const { return m_ok; }
  const std::string& message() const { return m_error; }

 private:
  std::string m_error;
  bool m_ok = true;
};

/// A value or an Error (the std::expected API subset we use).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_storage(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Error error) : m_storage(std::in_place_index<1>, std::move(error)) {}  // NOLINT
  Result(Status status) : m_storage(std::in_place_index<1>, Error(status.message())) {  // NOLINT
    assert(!status.isOk() && "a Result cannot be built from an ok Status");
  }

  bool has_value() const { return m_storage.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(m_storage); }
  const T& value() const& { return std::get<0>(m_storage); }
  T&& value() && { return std::get<0>(std::move(m_storage)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(m_storage); }

 private:
  std::variant<T, Error> m_storage;
};

}  // namespace core
