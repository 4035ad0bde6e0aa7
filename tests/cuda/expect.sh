# SPDX-License-Identifier: BSD-2-Clause
# What a traced run of tests/cuda/cuda_workers (linked or dlopen'd, on the stand-in
# libcuda.so.1) must give, from the numbers cuda_workers.c states: sourced by tests/t_cuda.sh
# and by the kernel matrix's driver (tests/vm/driver.sh), so both assert the same.
# the summary's process, projected: per (stage, class) cells at the peak and at the end
cells='[.stages[] | .stage as $s | .classes | to_entries[] |
	"\($s);\(.key) \(.value.bufs) \(.value.bytes)"] | sort | join(",")'
proj() {
	jq -r "select(.type == \"summary\") | .processes[0] |
		\"peak \(.peak.bytes) \(.peak | $cells)\",
		\"end \(.at_end.bytes) \(.at_end | $cells)\",
		\"lifetime \([.lifetime | to_entries[] | \"\(.key) \(.value.allocs)/\(.value.bytes_allocated) \(.value.frees)/\(.value.bytes_freed)\"] | join(\",\"))\",
		\"failed \(.anomalies.cuda_failed) events \(.events.buf_alloc)/\(.events.buf_free)/\(.events.stage) exact \(.exact)\"" "$1"
}

MIB=1048576
dev4=$((10 * MIB)) # the workers' cuMemAlloc: 1 + 2 + 3 + 4 MiB
peak_cells="(none);cuda_device 1 10240,gpu;cuda_device 4 $dev4,gpu;cuda_host 4 16384,gpu;cuda_managed 4 32768,gpu;input 4 4000"
want_workers="peak $((dev4 + 10240 + 16384 + 32768 + 4000)) $peak_cells
end $((dev4 + 10240)) (none);cuda_device 1 10240,gpu;cuda_device 4 $dev4
lifetime input 4/4000 4/4000,cuda_device 8/$((dev4 + 10240 + 2 * MIB + 3000 + 5000)) 3/$((2 * MIB + 3000 + 5000)),cuda_host 5/$((16384 + 6000)) 5/$((16384 + 6000)),cuda_managed 4/32768 4/32768
failed 5 events 4/4/8 exact true"
