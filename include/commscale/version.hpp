#pragma once
/// @file version.hpp
/// @brief Library version (kept in step with CMakeLists.txt's project(VERSION)).
#define COMMSCALE_VERSION_MAJOR 0
#define COMMSCALE_VERSION_MINOR 1
#define COMMSCALE_VERSION_PATCH 0
#define COMMSCALE_VERSION_STRING "0.1.0"
