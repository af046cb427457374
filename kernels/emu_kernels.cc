//go:build gpuemu && !gpu

// The kernel sources compiled as host C++ (see emu_cuda.h), and the
// table the emulated launcher finds them in.
#include "emu_cuda.h"

#include "elem.cu"
#include "gather.cu"
#include "gemm.cu"
#include "loss.cu"
#include "lstm.cu"
#include "norm.cu"

#include "emu_launch.h"

namespace {
const emu::Entry table[] = {
    EMU_PLAIN(binary_f32),
    EMU_PLAIN(add_bias),
    EMU_PLAIN(repeat_rows),
    EMU_PLAIN(sum_rows),
    EMU_PLAIN(relu_fwd),
    EMU_PLAIN(relu_grad),
    EMU_PLAIN(gelu_fwd),
    EMU_PLAIN(gelu_grad),
    EMU_PLAIN(gelu_erf_fwd),
    EMU_PLAIN(gelu_erf_grad),
    EMU_PLAIN(dropout_fwd),
    EMU_PLAIN(dropout_grad),
    EMU_ENTRY(transpose2d),
    EMU_PLAIN(adam_step),
    EMU_ENTRY(sum_squares),
    EMU_ENTRY(sum_parts),
    EMU_ENTRY(sum_squares_multi),
    EMU_PLAIN(clip_by_norm_multi),
    EMU_PLAIN(adam_step_multi),
    EMU_PLAIN(clip_by_norm),
    EMU_PLAIN(embed_fwd),
    EMU_PLAIN(embed_grad),
    EMU_PLAIN(relbias_fwd),
    EMU_PLAIN(relbias_grad),
    EMU_ENTRY(gemm_tf32),
    EMU_ENTRY(gemm_f32),
    EMU_ENTRY(ce_rows),
    EMU_ENTRY(ce_reduce),
    EMU_ENTRY(ce_count),
    EMU_ENTRY(ce_grad),
    EMU_ENTRY(log_softmax),
    EMU_ENTRY(logprob_at),
    EMU_ENTRY(argmax_rows),
    EMU_ENTRY(topk_rows),
    EMU_ENTRY(layernorm_stats),
    EMU_ENTRY(layernorm_fwd),
    EMU_ENTRY(layernorm_grad_x),
    EMU_PLAIN(layernorm_grad_gamma),
    EMU_ENTRY(rmsnorm_stats),
    EMU_ENTRY(rmsnorm_fwd),
    EMU_ENTRY(rmsnorm_grad_x),
    EMU_PLAIN(rmsnorm_grad_gamma),
    EMU_ENTRY(attn_softmax),
    EMU_ENTRY(attn_softmax_grad),
    EMU_PLAIN(sum_to),
    EMU_PLAIN(lstm_gates),
    EMU_PLAIN(lstm_gates_back),
    EMU_ENTRY(add_attn),
    EMU_PLAIN(add_attn_back_q),
    EMU_PLAIN(add_attn_back_k),
    EMU_ENTRY(copy_loss),
    EMU_PLAIN(copy2d),
    EMU_PLAIN(fill_f32),
};
}  // namespace

const emu::Entry* emu_find(const char* name) {
  for (const emu::Entry& e : table)
    if (strcmp(e.name, name) == 0) return &e;
  for (int i = 0; i < emu_selftest_len; i++)
    if (strcmp(emu_selftest_table[i].name, name) == 0) return &emu_selftest_table[i];
  return nullptr;
}
