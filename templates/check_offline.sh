#!/usr/bin/env bash
# Dev aid, no GPU needed: compiles a sample of configurations of every template with
# nvcc for sm_80 and sm_90, or for the archs a template is written for (including the
# extremes of each parameter that the spec's restrictions allow) and prints ptxas'
# registers, spills and shared memory for the tuned kernel. Exits 1 if any configuration
# fails to compile or spills.
# ktune itself compiles through NVRTC; this checks the sources, not ktune.
#
# usage: templates/check_offline.sh [template ...]     (default: all)
#        NVCC=/path/to/nvcc ARCHS="sm_90" templates/check_offline.sh sgemm
set -u
here="$(cd "$(dirname "$0")" && pwd)"
nvcc="${NVCC:-nvcc}"
archs="${ARCHS:-sm_80 sm_90}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# template|defines[|archs] (one configuration per line; ROW_LEN comes from the spec's
# compiler_options; archs, when given, replaces ARCHS: the spec's kernel.archs)
configs='
vector_add|-Dblock_size_x=256 -Ditems_per_thread=4 -Dvector_width=4 -Dunroll=1 -Dgrid_stride=0
vector_add|-Dblock_size_x=1024 -Ditems_per_thread=8 -Dvector_width=2 -Dunroll=1 -Dgrid_stride=1
vector_add|-Dblock_size_x=64 -Ditems_per_thread=16 -Dvector_width=1 -Dunroll=0 -Dgrid_stride=1
triad|-Dblock_size_x=512 -Ditems_per_thread=16 -Dvector_width=2 -Dunroll=1 -Dgrid_stride=0
triad|-Dblock_size_x=64 -Ditems_per_thread=1 -Dvector_width=4 -Dunroll=1 -Dgrid_stride=1
reduce_sum|-Dblock_size_x=1024 -Ditems_per_thread=8 -Dvector_width=4 -Dblock_reduce=0 -Dpasses=1
reduce_sum|-Dblock_size_x=64 -Ditems_per_thread=1 -Dvector_width=1 -Dblock_reduce=1 -Dpasses=2
reduce_sum|-Dblock_size_x=256 -Ditems_per_thread=4 -Dvector_width=2 -Dblock_reduce=1 -Dpasses=1
transpose|-Dblock_size_x=32 -Dblock_size_y=8 -Dvector_width=1 -Dpadding=1 -Dread_only=0 -Dstreaming_stores=0
transpose|-Dblock_size_x=64 -Dblock_size_y=16 -Dvector_width=1 -Dpadding=2 -Dread_only=1 -Dstreaming_stores=1
transpose|-Dblock_size_x=8 -Dblock_size_y=32 -Dvector_width=4 -Dpadding=0 -Dread_only=1 -Dstreaming_stores=0
sgemm|-Dblock_size_x=256 -Dblock_m=128 -Dblock_n=128 -Dblock_k=8 -Dthread_m=8 -Dthread_n=8 -Dvector_width=4 -Dpadding=4 -Ddouble_buffer=1
sgemm|-Dblock_size_x=64 -Dblock_m=64 -Dblock_n=64 -Dblock_k=16 -Dthread_m=8 -Dthread_n=8 -Dvector_width=4 -Dpadding=4 -Ddouble_buffer=1
sgemm|-Dblock_size_x=256 -Dblock_m=128 -Dblock_n=128 -Dblock_k=16 -Dthread_m=8 -Dthread_n=8 -Dvector_width=4 -Dpadding=0 -Ddouble_buffer=0
sgemm|-Dblock_size_x=512 -Dblock_m=256 -Dblock_n=64 -Dblock_k=32 -Dthread_m=8 -Dthread_n=4 -Dvector_width=4 -Dpadding=4 -Ddouble_buffer=0
sgemm|-Dblock_size_x=256 -Dblock_m=64 -Dblock_n=64 -Dblock_k=16 -Dthread_m=4 -Dthread_n=4 -Dvector_width=1 -Dpadding=0 -Ddouble_buffer=1
gemm_bf16|-Dblock_size_x=128 -Dblock_m=128 -Dblock_n=128 -Dblock_k=32 -Dwarps_m=2 -Dwarps_n=2 -Dstages=3 -Dsmem_pad=8 -Dgroup_m=8
gemm_bf16|-Dblock_size_x=256 -Dblock_m=256 -Dblock_n=128 -Dblock_k=64 -Dwarps_m=4 -Dwarps_n=2 -Dstages=4 -Dsmem_pad=8 -Dgroup_m=16
gemm_bf16|-Dblock_size_x=64 -Dblock_m=64 -Dblock_n=64 -Dblock_k=32 -Dwarps_m=1 -Dwarps_n=2 -Dstages=2 -Dsmem_pad=0 -Dgroup_m=1
gemm_bf16|-Dblock_size_x=512 -Dblock_m=128 -Dblock_n=128 -Dblock_k=32 -Dwarps_m=4 -Dwarps_n=4 -Dstages=3 -Dsmem_pad=8 -Dgroup_m=4
conv2d|-Dblock_size_x=32 -Dblock_size_y=8 -Dtile_size_x=1 -Dtile_size_y=4 -Duse_padding=1 -Dread_only=1 -Dfilter_in_smem=1
conv2d|-Dblock_size_x=16 -Dblock_size_y=4 -Dtile_size_x=8 -Dtile_size_y=4 -Duse_padding=0 -Dread_only=0 -Dfilter_in_smem=0
conv2d|-Dblock_size_x=64 -Dblock_size_y=16 -Dtile_size_x=1 -Dtile_size_y=8 -Duse_padding=1 -Dread_only=1 -Dfilter_in_smem=0
stencil2d|-Dblock_size_x=128 -Dblock_size_y=2 -Dtile_size_x=1 -Dtile_size_y=4 -Duse_smem=0 -Dread_only=1
stencil2d|-Dblock_size_x=512 -Dblock_size_y=2 -Dtile_size_x=4 -Dtile_size_y=2 -Duse_smem=0 -Dread_only=1
stencil2d|-Dblock_size_x=64 -Dblock_size_y=16 -Dtile_size_x=1 -Dtile_size_y=8 -Duse_smem=1 -Dread_only=0
stencil2d|-Dblock_size_x=1024 -Dblock_size_y=1 -Dtile_size_x=1 -Dtile_size_y=16 -Duse_smem=0 -Dread_only=1
softmax|-DROW_LEN=8192 -Dblock_size_x=256 -Drows_per_block=1 -Dvector_width=4 -Dcache_row=1 -Dfast_exp=1 -Dstreaming_stores=0
softmax|-DROW_LEN=8192 -Dblock_size_x=1024 -Drows_per_block=32 -Dvector_width=1 -Dcache_row=0 -Dfast_exp=0 -Dstreaming_stores=1
softmax|-DROW_LEN=8192 -Dblock_size_x=128 -Drows_per_block=1 -Dvector_width=4 -Dcache_row=1 -Dfast_exp=0 -Dstreaming_stores=1
rmsnorm|-DROW_LEN=8192 -Dblock_size_x=256 -Drows_per_block=1 -Dvector_width=4 -Dcache_row=1 -Dstreaming_stores=0
rmsnorm|-DROW_LEN=8192 -Dblock_size_x=1024 -Drows_per_block=32 -Dvector_width=1 -Dcache_row=0 -Dstreaming_stores=1
rmsnorm|-DROW_LEN=8192 -Dblock_size_x=128 -Drows_per_block=1 -Dvector_width=4 -Dcache_row=1 -Dstreaming_stores=1
gemm_wgmma|-Dblock_size_x=256 -Dwarpgroups=2 -Dwg_tiles_m=1 -Dblock_n=256 -Dblock_k=64 -Dstages=4 -Dgroup_m=8|sm_90a
gemm_wgmma|-Dblock_size_x=256 -Dwarpgroups=2 -Dwg_tiles_m=2 -Dblock_n=128 -Dblock_k=128 -Dstages=4 -Dgroup_m=16|sm_90a
gemm_wgmma|-Dblock_size_x=128 -Dwarpgroups=1 -Dwg_tiles_m=2 -Dblock_n=64 -Dblock_k=64 -Dstages=6 -Dgroup_m=1|sm_90a
'

want="${*:-}"
status=0
printf '%-11s %-6s %5s %6s %7s  %s\n' template arch regs spill smem defines
while IFS='|' read -r name defines only_archs; do
  [ -z "$name" ] && continue
  if [ -n "$want" ] && [[ " $want " != *" $name "* ]]; then continue; fi
  for arch in ${only_archs:-$archs}; do
    log="$out/log"
    if ! "$nvcc" -arch="$arch" -std=c++17 -cubin -Xptxas -v $defines "$here/$name/$name.cu" \
         -o "$out/k.cubin" >"$log" 2>&1; then
      printf '%-11s %-6s FAILED  %s\n' "$name" "$arch" "$defines"; sed 's/^/    /' "$log" | tail -5
      status=1; continue
    fi
    # ptxas prints, per entry: "Compiling entry function 'NAME'", the stack/spill line,
    # then "Used N registers, ..., M bytes smem".
    info="$(awk -v k="'$name'" '$0 ~ "entry function " k {f=1; next} f && /spill stores/ {sp=$5} f && /Used/ {
             r=$5; sm=0; for (i=1;i<=NF;i++) if ($(i+1)=="bytes" && $(i+2) ~ /^smem/) sm=$i; print r, sp, sm; exit}' "$log")"
    read -r regs spill smem <<<"$info"
    printf '%-11s %-6s %5s %6s %7s  %s\n' "$name" "$arch" "${regs:-?}" "${spill:-?}" "${smem:-0}" "$defines"
    if [ "${spill:-1}" != "0" ]; then status=1; fi
  done
done <<<"$configs"
exit $status
