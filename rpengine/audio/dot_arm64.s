//go:build arm64 && !purego

#include "textflag.h"

// func dotsNEON(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32)
// taps is a positive multiple of 8; the caller checked every row and
// window (see checkDots). Vector adds are fused multiply-adds by 1.0 (the
// assembler has no vector float add), which round like adds.
TEXT ·dotsNEON(SB), NOSPLIT, $0-136
	MOVD  out_base+0(FP), R0
	MOVD  stride+24(FP), R1
	LSL   $2, R1 // bytes between outputs
	MOVD  coef_base+32(FP), R2
	MOVD  taps+56(FP), R3
	MOVD  buf_base+64(FP), R4
	MOVD  rows_base+88(FP), R5
	MOVD  rows_len+96(FP), R6
	MOVD  wins_base+112(FP), R7
	MOVD  $0, R8
	FMOVS $1.0, F31
	VDUP  V31.S[0], V31.S4

output:
	CMP  R6, R8
	BGE  done
	MOVW (R5)(R8<<2), R9
	ADD  R9<<2, R2, R10 // the coefficient row
	MOVW (R7)(R8<<2), R9
	ADD  R9<<2, R4, R11 // the input window
	MOVD R3, R12
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16

loop16:
	CMP    $16, R12
	BLT    loop8
	VLD1.P 64(R10), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R11), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA  V4.S4, V16.S4, V0.S4
	VFMLA  V5.S4, V17.S4, V1.S4
	VFMLA  V6.S4, V18.S4, V2.S4
	VFMLA  V7.S4, V19.S4, V3.S4
	SUB    $16, R12
	B      loop16

loop8:
	CMP    $8, R12
	BLT    sum
	VLD1.P 32(R10), [V4.S4, V5.S4]
	VLD1.P 32(R11), [V16.S4, V17.S4]
	VFMLA  V4.S4, V16.S4, V0.S4
	VFMLA  V5.S4, V17.S4, V1.S4
	SUB    $8, R12
	B      loop8

sum:
	VFMLA V1.S4, V31.S4, V0.S4
	VFMLA V3.S4, V31.S4, V2.S4
	VFMLA V2.S4, V31.S4, V0.S4
	VDUP  V0.S[1], V20.S4
	VDUP  V0.S[2], V21.S4
	VDUP  V0.S[3], V22.S4
	FADDS F20, F0, F0
	FADDS F22, F21, F21
	FADDS F21, F0, F0
	FMOVS F0, (R0)
	ADD   R1, R0
	ADD   $1, R8
	B     output

done:
	RET
