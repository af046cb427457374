// Entry points shared by the emulator's scheduler and its kernel table.
#pragma once

#include "emu_cuda.h"

// The emulator's own test kernels (emu_selftest.cc).
extern const emu::Entry emu_selftest_table[];
extern const int emu_selftest_len;

// emu_find returns the table entry of a kernel, or null.
const emu::Entry* emu_find(const char* name);

#ifdef __cplusplus
extern "C" {
#endif
// emu_launch runs kernel name over the grid; slots hold the arguments, one
// 8-byte slot each, and sig their type codes. It returns 0, or 1 with a
// message in errbuf.
int emu_launch(const char* name, const char* sig, int gx, int gy, int gz, int bx, int by, int bz,
               unsigned long long* slots, char* errbuf, int errlen);
#ifdef __cplusplus
}
#endif
