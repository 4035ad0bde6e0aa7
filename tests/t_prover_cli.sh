#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The prover's command line: --help documents every knob; bad numbers, bad words and bad
# input files each get one line on stderr and their own exit code.
source "$(dirname "$0")/lib.sh"
P=$BUILD/prover

help=$("$P" --help)
check_eq "--help exits 0" "$?" 0
flat=$(printf '%s\n' "$help" | tr -s ' \n' '  ') # argp wraps: match phrases across lines
for opt in proofs partitions pw gw chan-cap permit-release jobs log-n gpu-rounds synth-rounds \
	gpu gpu-rate gpu-spread h-check-every host synth-rate synth-spread model-seed input \
	payload-kib untracked-mb json; do
	check_match "--help documents --$opt" "$help" "--$opt[= ]"
done
check_match "--help names the incident's policy" "$help" "after-synth \(the incident"
check_match "--help names the fix's policy" "$help" "after-send \(the fix; default\)"
check_match "--help has examples" "$help" "^Examples:"
check_match "--help says the model is MODELLED" "$help" "model: a MODELLED GPU"
check_match "--help: auto falls back to the modelled device" "$flat" \
	"auto \(default\): CUDA when a device is present, else the modelled device"
check_match "--help: the rate's defaults and unit" "$flat" \
	"million field operations per second \(1..100000000; default 155 with --host model, 55.4 ms at 2\^17: cuzk's GPU stage 50 times shorter, at cuzk's balance with the modelled synthesis; else 100, 181 ms at 2\^18"
check_match "--help: the device's spread, cuzk's range" "$flat" \
	"uniformly within PCT% of its mean, drawn from --model-seed \(0..90, default 35: cuzk's 1.8-3.75 s\)"
check_match "--help says the host model is MODELLED" "$flat" \
	"real \(default\): synthesis takes what it takes on this machine's cores; model: a MODELLED host"
check_match "--help: the host's rate, its default and cuzk's figure" "$flat" \
	"thousand constraints per second per partition, --synth-rounds R counting R times \(1..100000000, default 174: 729.7 ms at 2\^17, cuzk's 36.5 s under load 50 times shorter\)"
check_match "--help: the host's spread" "$flat" "mean \(0..90, default 20\)"
check_match "--help: the seed gives every variant the same durations" "$flat" \
	"the same seed gives every variant the same durations"
check_match "--help: where the modelled device's H is checked" "$flat" \
	"1 in 10 on the modelled device, checked after"
check_match "--help lists the exit codes" "$help" "4 malformed C1 input"
gen_help=$("$P" gen-c1 --help)
for opt in output partitions payload-kib sector seed; do
	check_match "gen-c1 --help documents --$opt" "$gen_help" "--$opt[= ]"
done

# usage errors: exit 2, exactly one line, naming the option
usage_error() { # DESCRIPTION PATTERN ARGS...
	local what=$1 pat=$2 err rc lines
	shift 2
	err=$("$P" "$@" 2>&1 >/dev/null)
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" = 2 ] && [ "$lines" = 1 ] && printf '%s' "$err" | grep -Eq -- "$pat"; then
		ok "$what: exit 2, one line"
	else
		not_ok "$what: exit 2, one line" "rc $rc, $lines lines: $err"
	fi
}
usage_error "--pw abc" "^prover: --pw: 'abc' is not a whole number from 1 to" --pw abc
usage_error "--pw 0" "--pw: '0' is not a whole number" --pw 0
usage_error "--log-n 99" "--log-n: '99' is not a whole number from 8 to 26" --log-n 99
usage_error "--proofs -1" "--proofs: '-1'" --proofs -1
usage_error "--chan-cap 1x" "--chan-cap: '1x'" --chan-cap 1x
usage_error "--gpu-rounds 0" "--gpu-rounds: '0'" --gpu-rounds 0
usage_error "--untracked-mb too big" "--untracked-mb: '99999999'" --untracked-mb 99999999
usage_error "--jobs empty" "--jobs: ''" --jobs ""
usage_error "--permit-release sometime" "neither after-synth nor after-send" \
	--permit-release sometime
usage_error "--gpu tpu" "--gpu: 'tpu' is not auto, model, cpu or cuda" --gpu tpu
usage_error "--gpu-rate 0" "--gpu-rate: '0' is not a whole number from 1 to 100000000" \
	--gpu-rate 0
usage_error "--gpu-rate 1e9" "--gpu-rate: '1e9'" --gpu-rate 1e9
usage_error "--gpu-rate too big" "--gpu-rate: '100000001'" --gpu-rate 100000001
usage_error "--gpu-spread 91" "--gpu-spread: '91' is not a whole number from 0 to 90" \
	--gpu-spread 91
usage_error "--host cloud" "--host: 'cloud' is neither real nor model" --host cloud
usage_error "--synth-rate 0" "--synth-rate: '0' is not a whole number from 1 to 100000000" \
	--synth-rate 0
usage_error "--synth-spread -1" "--synth-spread: '-1'" --synth-spread -1
usage_error "--model-seed x" "--model-seed: 'x' is not a whole number from 0 to" --model-seed x
usage_error "--h-check-every 0" "--h-check-every: '0' is not a whole number from 1 to 100000" \
	--h-check-every 0
usage_error "a stray argument" "unexpected argument 'extra'" extra
usage_error "--partitions with --input" "--partitions applies to the generated input" \
	--partitions 3 --input /dev/null
usage_error "gen-c1 without -o" "gen-c1: -o FILE is required" gen-c1

"$P" gen-c1 -o /nonexistent-dir/c1.json 2>"$TMP/err"
check_eq "gen-c1 into a missing directory: exit 3" "$?" 3
check_match "... saying why" "$(cat "$TMP/err")" \
	"cannot write /nonexistent-dir/c1.json: No such file"

# input files
"$P" gen-c1 -o "$TMP/good.json" --partitions 2 --payload-kib 1
check_eq "gen-c1 writes a file" "$?" 0
out=$("$P" -i "$TMP/good.json" --log-n 10 -n 2 --h-check-every 1 2>/dev/null)
check_eq "a good file proves: exit 0" "$?" 0
check_match "... all 4 partitions checked" "$out" "H checks +4/4 passed"

bad_input() { # DESCRIPTION FILE EXPECTED-RC PATTERN
	local err rc lines
	err=$("$P" -i "$2" --log-n 10 -n 1 2>&1 >"$TMP/stdout")
	rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" = "$3" ] && [ "$lines" = 1 ] && [ ! -s "$TMP/stdout" ] &&
		printf '%s' "$err" | grep -Eq -- "$4"; then
		ok "$1: exit $3, one line"
	else
		not_ok "$1: exit $3, one line" "rc $rc, $lines lines: $err"
	fi
}
: >"$TMP/empty.json"
head -c 150 "$TMP/good.json" >"$TMP/truncated.json"
echo 'sector = 1' >"$TMP/notjson.json"
sed 's/"version": 1/"version": 2/' "$TMP/good.json" >"$TMP/v2.json"
sed '/"ticket"/d' "$TMP/good.json" >"$TMP/noticket.json"
sed 's/"phase1_out": "./"phase1_out": "*/' "$TMP/good.json" >"$TMP/badb64.json"
sed 's/"partitions": 2/"partitions": "2"/' "$TMP/good.json" >"$TMP/strpart.json"
{ cat "$TMP/good.json"; echo '{}'; } >"$TMP/twice.json"
m="malformed C1 input: "
bad_input "an empty file" "$TMP/empty.json" 4 "empty.json: ${m}empty file"
bad_input "a truncated file" "$TMP/truncated.json" 4 "${m}truncated JSON"
bad_input "not JSON" "$TMP/notjson.json" 4 "${m}not valid JSON"
bad_input "version 2" "$TMP/v2.json" 4 "${m}field \"version\" must be from 1 to 1, not 2"
bad_input "no ticket" "$TMP/noticket.json" 4 "${m}missing field \"ticket\""
bad_input "bad base64" "$TMP/badb64.json" 4 \
	"${m}field \"phase1_out\" is not base64: bad character at offset 0"
bad_input "partitions as a string" "$TMP/strpart.json" 4 \
	"${m}field \"partitions\" must be an integer, not a string"
bad_input "two JSON values" "$TMP/twice.json" 4 "${m}trailing data after the JSON value"
bad_input "a missing file" "$TMP/missing.json" 3 "missing.json: cannot open: No such file"
bad_input "a directory" "$TMP" 3 "cannot read: not a regular file"

# --gpu=cuda: a distinct exit where there is no device (CI, this project's machines)
if [ -e /dev/nvidiactl ]; then
	"$P" --gpu cuda -n 1 --log-n 10 >/dev/null 2>&1
	check_eq "--gpu=cuda with a device present: exit 0" "$?" 0
else
	err=$("$P" --gpu cuda -n 1 --log-n 10 2>&1 >/dev/null)
	check_eq "--gpu=cuda without a device: exit 6" "$?" 6
	check_match "... one line saying why" "$err" "^prover: --gpu=cuda: "
fi
finish
