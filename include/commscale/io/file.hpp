#pragma once
/// @file io/file.hpp
/// @brief File helpers: whole-file reads with clear errors, and atomic writes (a temporary file in
/// the same directory, then rename), so an error never leaves a truncated or half-written file
/// and never clobbers an existing one.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "../error.hpp"

namespace commscale::io {

/// @brief Reads a whole file. Throws input_error naming `field` for a missing file, a directory,
/// or an unreadable one.
[[nodiscard]] inline std::string read_file(const std::string& path, std::string_view field = "file") {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw input_error(std::string(field), "'" + path + "'", "an existing file");
    if (fs::is_directory(st)) throw input_error(std::string(field), "'" + path + "' (a directory)", "a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(std::string(field), "'" + path + "' (" + std::strerror(errno) + ")", "a readable file");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw input_error(std::string(field), "'" + path + "' (read error)", "a readable file");
    return ss.str();
}

/// @brief Throws input_error naming `field` unless `path` could be written by write_file_atomic
/// (not empty, not a directory, in an existing writable directory). Commands that write several
/// files check them all first, so a failure on the second never leaves the first behind.
inline void require_writable(const std::string& path, std::string_view field = "--out") {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty()) throw input_error(std::string(field), "an empty path", "a file path");
    const fs::path target(path);
    if (fs::is_directory(target, ec)) throw input_error(std::string(field), "'" + path + "' (a directory)", "a file path");
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec)) throw input_error(std::string(field), "'" + path + "'", "a path in an existing directory");
    const auto perms = fs::status(dir, ec).permissions();
    if (!ec && (perms & (fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write)) == fs::perms::none)
        throw input_error(std::string(field), "'" + path + "' (directory not writable)", "a writable location");
}

/// @brief Writes `content` to `path` atomically: a temporary file beside it, flushed, then renamed.
/// On any failure the temporary is removed and the existing file, if any, is untouched.
inline void write_file_atomic(const std::string& path, std::string_view content, std::string_view field = "--out") {
    namespace fs = std::filesystem;
    require_writable(path, field);
    const fs::path target(path);
    std::error_code ec;
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::random_device rd;
    const fs::path tmp = dir / (".commscale-" + target.filename().string() + "." + std::to_string(rd()) + ".tmp");
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw input_error(std::string(field), "'" + path + "' (" + std::strerror(errno) + ")", "a writable location");
        out.write(content.data(), static_cast<std::streamsize>(content.size()));
        out.flush();
        if (!out) {
            out.close();
            fs::remove(tmp, ec);
            throw input_error(std::string(field), "'" + path + "' (write failed)", "a writable location with free space");
        }
    }
    fs::rename(tmp, target, ec);
    if (ec) {
        std::error_code ec2;
        fs::remove(tmp, ec2);
        throw input_error(std::string(field), "'" + path + "' (" + ec.message() + ")", "a writable location");
    }
}

}  // namespace commscale::io
