//go:build amd64 && !purego

#include "textflag.h"

// func dotsAVX2(out []float32, stride int, coef []float32, taps int, buf []float32, rows, wins []int32)
// taps is a positive multiple of 8; the caller checked every row and
// window (see checkDots). Outputs go in pairs: one output alone is four
// chains of fused multiply-adds that wait on each other's latency, two
// are eight that keep both FMA units busy, and when both use the same
// coefficient row (one phase, as at 48 to 16 kHz) it is loaded once. The
// taps of a row are walked with one offset register (CX) for all four
// pointers.
TEXT ·dotsAVX2(SB), NOSPLIT, $0-136
	MOVQ out_base+0(FP), DI
	MOVQ stride+24(FP), R8
	SHLQ $2, R8 // bytes between outputs
	MOVQ coef_base+32(FP), SI
	MOVQ taps+56(FP), DX
	SHLQ $2, DX // bytes of a row
	MOVQ DX, R12
	ANDQ $-128, R12 // bytes of its 32-tap blocks
	MOVQ buf_base+64(FP), BX
	MOVQ rows_base+88(FP), R9
	MOVQ rows_len+96(FP), R11
	MOVQ wins_base+112(FP), R10

pair:
	CMPQ    R11, $2
	JLT     single
	MOVLQSX (R9), AX
	LEAQ    (SI)(AX*4), R13 // row of the first output
	MOVLQSX 4(R9), AX
	LEAQ    (SI)(AX*4), R15 // row of the second
	MOVLQSX (R10), AX
	LEAQ    (BX)(AX*4), R14 // window of the first
	MOVLQSX 4(R10), AX
	LEAQ    (BX)(AX*4), AX  // window of the second
	XORQ    CX, CX
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	VXORPS  Y4, Y4, Y4
	VXORPS  Y5, Y5, Y5
	VXORPS  Y6, Y6, Y6
	VXORPS  Y7, Y7, Y7
	CMPQ    R13, R15
	JEQ     shared
	CMPQ    CX, R12
	JGE     two8

two32:
	VMOVUPS     (R13)(CX*1), Y8
	VMOVUPS     32(R13)(CX*1), Y9
	VMOVUPS     64(R13)(CX*1), Y10
	VMOVUPS     96(R13)(CX*1), Y11
	VMOVUPS     (R15)(CX*1), Y12
	VMOVUPS     32(R15)(CX*1), Y13
	VMOVUPS     64(R15)(CX*1), Y14
	VMOVUPS     96(R15)(CX*1), Y15
	VFMADD231PS (R14)(CX*1), Y8, Y0
	VFMADD231PS 32(R14)(CX*1), Y9, Y1
	VFMADD231PS 64(R14)(CX*1), Y10, Y2
	VFMADD231PS 96(R14)(CX*1), Y11, Y3
	VFMADD231PS (AX)(CX*1), Y12, Y4
	VFMADD231PS 32(AX)(CX*1), Y13, Y5
	VFMADD231PS 64(AX)(CX*1), Y14, Y6
	VFMADD231PS 96(AX)(CX*1), Y15, Y7
	ADDQ        $128, CX
	CMPQ        CX, R12
	JLT         two32

two8:
	CMPQ        CX, DX
	JGE         sum2
	VMOVUPS     (R13)(CX*1), Y8
	VMOVUPS     (R15)(CX*1), Y12
	VFMADD231PS (R14)(CX*1), Y8, Y0
	VFMADD231PS (AX)(CX*1), Y12, Y4
	ADDQ        $32, CX
	JMP         two8

shared:
	CMPQ CX, R12
	JGE  shared8

shared32:
	VMOVUPS     (R13)(CX*1), Y8
	VMOVUPS     32(R13)(CX*1), Y9
	VMOVUPS     64(R13)(CX*1), Y10
	VMOVUPS     96(R13)(CX*1), Y11
	VFMADD231PS (R14)(CX*1), Y8, Y0
	VFMADD231PS 32(R14)(CX*1), Y9, Y1
	VFMADD231PS 64(R14)(CX*1), Y10, Y2
	VFMADD231PS 96(R14)(CX*1), Y11, Y3
	VFMADD231PS (AX)(CX*1), Y8, Y4
	VFMADD231PS 32(AX)(CX*1), Y9, Y5
	VFMADD231PS 64(AX)(CX*1), Y10, Y6
	VFMADD231PS 96(AX)(CX*1), Y11, Y7
	ADDQ        $128, CX
	CMPQ        CX, R12
	JLT         shared32

shared8:
	CMPQ        CX, DX
	JGE         sum2
	VMOVUPS     (R13)(CX*1), Y8
	VFMADD231PS (R14)(CX*1), Y8, Y0
	VFMADD231PS (AX)(CX*1), Y8, Y4
	ADDQ        $32, CX
	JMP         shared8

sum2:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0 // the first output's 8 lanes
	VADDPS       Y5, Y4, Y4
	VADDPS       Y7, Y6, Y6
	VADDPS       Y6, Y4, Y4 // the second's
	VHADDPS      Y4, Y0, Y0 // a01 a23 b01 b23 | a45 a67 b45 b67
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0 // a b a b
	VMOVSS       X0, (DI)
	VMOVSHDUP    X0, X1
	VMOVSS       X1, (DI)(R8*1)
	LEAQ         (DI)(R8*2), DI
	ADDQ         $8, R9
	ADDQ         $8, R10
	SUBQ         $2, R11
	JMP          pair

single:
	TESTQ   R11, R11
	JEQ     done
	MOVLQSX (R9), AX
	LEAQ    (SI)(AX*4), R13
	MOVLQSX (R10), AX
	LEAQ    (BX)(AX*4), R14
	XORQ    CX, CX
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	CMPQ    CX, R12
	JGE     one8

one32:
	VMOVUPS     (R13)(CX*1), Y4
	VMOVUPS     32(R13)(CX*1), Y5
	VMOVUPS     64(R13)(CX*1), Y6
	VMOVUPS     96(R13)(CX*1), Y7
	VFMADD231PS (R14)(CX*1), Y4, Y0
	VFMADD231PS 32(R14)(CX*1), Y5, Y1
	VFMADD231PS 64(R14)(CX*1), Y6, Y2
	VFMADD231PS 96(R14)(CX*1), Y7, Y3
	ADDQ        $128, CX
	CMPQ        CX, R12
	JLT         one32

one8:
	CMPQ        CX, DX
	JGE         sum1
	VMOVUPS     (R13)(CX*1), Y4
	VFMADD231PS (R14)(CX*1), Y4, Y0
	ADDQ        $32, CX
	JMP         one8

sum1: // in the order of sum2, so that an output does not depend on its pairing
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VHADDPS      Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         R8, DI
	ADDQ         $4, R9
	ADDQ         $4, R10
	DECQ         R11
	JMP          single

done:
	VZEROUPPER
	RET
