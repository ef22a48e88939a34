#pragma once
/// @file io/file.hpp
/// @brief File helpers: whole-file reads with clear errors, and atomic writes (a temporary file in
/// the same directory, then rename), so an error never leaves a truncated or half-written file
/// and never clobbers an existing one.

#include <cerrno>
#include <cstdio>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "../error.hpp"

namespace commscale::io {

/// @brief Largest input read_file and read_stream accept: 256 MiB. Every input commscale reads
/// (cluster, model and plan JSON, nccl-tests logs, probe output) is kilobytes to a few megabytes;
/// the cap turns an endless or absurd input (/dev/zero, a wrong path to a disk image) into an
/// error instead of exhausting memory.
inline constexpr std::size_t max_input_bytes = std::size_t{256} << 20;

/// @brief Reads all of `in` (named `name` in errors), at most max_input_bytes. Throws
/// input_error naming `field` for a read error or an input over the cap.
[[nodiscard]] inline std::string read_stream(std::istream& in, const std::string& name, std::string_view field = "file") {
    std::string text;
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        const auto got = static_cast<std::size_t>(in.gcount());
        if (text.size() + got > max_input_bytes)
            throw input_error(std::string(field), "'" + name + "' (more than 256 MiB)",
                              "an input of at most 256 MiB (commscale's inputs are kilobytes to megabytes)");
        text.append(buf, got);
    }
    if (in.bad()) throw input_error(std::string(field), "'" + name + "' (read error)", "a readable file");
    return text;
}

/// @brief Reads a whole file (regular files, and pipes such as <(...) or a /dev/stdin that is
/// one), at most max_input_bytes. Throws input_error naming `field` for a missing file, a
/// directory, a device or socket (/dev/zero, /dev/urandom, a terminal: endless, never an input),
/// an unreadable file, or one over the cap. Commands that read standard input take `-` and
/// read_stream(std::cin, ...).
[[nodiscard]] inline std::string read_file(const std::string& path, std::string_view field = "file") {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw input_error(std::string(field), "'" + path + "'", "an existing file");
    if (fs::is_directory(st)) throw input_error(std::string(field), "'" + path + "' (a directory)", "a regular file");
    if (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_socket(st))
        throw input_error(std::string(field),
                          "'" + path + "' (a " + (fs::is_socket(st) ? "socket" : fs::is_block_file(st) ? "block device" : "character device") + ")",
                          "a regular file or a pipe of at most 256 MiB");
    if (fs::is_regular_file(st)) {
        const auto size = fs::file_size(path, ec);
        if (!ec && size > max_input_bytes)
            throw input_error(std::string(field), "'" + path + "' (" + std::to_string(size) + " bytes)",
                              "a file of at most 256 MiB (commscale's inputs are kilobytes to megabytes)");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error(std::string(field), "'" + path + "' (" + std::strerror(errno) + ")", "a readable file");
    return read_stream(in, path, field);
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
