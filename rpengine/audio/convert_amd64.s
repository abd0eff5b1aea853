//go:build amd64 && !purego

#include "textflag.h"

// func int16ToFloat32AVX2(out []float32, src []int16)
TEXT ·int16ToFloat32AVX2(SB), NOSPLIT, $0-48
	MOVQ         out_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	MOVL         $0x38000000, AX // 1/32768
	MOVL         AX, X1
	VPBROADCASTD X1, Y1

loop:
	CMPQ      CX, $8
	JB        done
	VPMOVSXWD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VMULPS    Y1, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       loop

done:
	VZEROUPPER
	RET
