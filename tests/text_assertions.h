// Test assertion shared by the error-message tests: a text contains every
// given part (messages are checked by their pieces: file, JSON path, value).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace servesim::testing {

inline ::testing::AssertionResult Contains(
    const std::string& text, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (text.find(p) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "\"" << text << "\" lacks \"" << p << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace servesim::testing
