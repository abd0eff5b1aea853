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

// rev8 reverses the 8 lanes of a vector (VPERMPS indices).
DATA rev8<>+0(SB)/4, $7
DATA rev8<>+4(SB)/4, $6
DATA rev8<>+8(SB)/4, $5
DATA rev8<>+12(SB)/4, $4
DATA rev8<>+16(SB)/4, $3
DATA rev8<>+20(SB)/4, $2
DATA rev8<>+24(SB)/4, $1
DATA rev8<>+28(SB)/4, $0
GLOBL rev8<>(SB), RODATA|NOPTR, $32

// func dotsFoldAVX2(out []float32, stride int, wide []float32, taps int, buf []float32, wins []int32)
// The folded kernel of a one-phase row (fold.go, folded.wide): wide holds
// nb blocks of 8 pair coefficients c[q], q = 8b..8b+7, then the edge
// block [0 ... 0 row[taps-1]]. An output is, block by block, the sum of
// c[q] * (x[q] + x[taps-2-q]): the mirrored 8 samples are loaded
// ascending and reversed with VPERMPS. Even blocks and the edge block go
// to one sum, odd blocks to another. Four outputs at a time share the
// loads of the coefficients; an output alone takes the same steps, and
// the horizontal sums are the same, so an output has the same bits
// however its batch is made. taps >= 16; the caller checked every window.
TEXT ·dotsFoldAVX2(SB), NOSPLIT, $0-112
	MOVQ    out_base+0(FP), DI
	MOVQ    stride+24(FP), R8
	SHLQ    $2, R8 // bytes between outputs
	MOVQ    wide_base+32(FP), SI
	MOVQ    wide_len+40(FP), R12
	SUBQ    $8, R12
	SHLQ    $2, R12 // bytes of the pair blocks; the edge block follows
	MOVQ    taps+56(FP), DX
	SUBQ    $8, DX
	SHLQ    $2, DX // offset of the last 8 samples of a window
	MOVQ    buf_base+64(FP), BX
	MOVQ    wins_base+88(FP), R10
	MOVQ    wins_len+96(FP), R11
	VMOVUPS rev8<>(SB), Y9

quad:
	CMPQ    R11, $4
	JLT     single
	MOVLQSX (R10), AX
	LEAQ    (BX)(AX*4), R13
	MOVLQSX 4(R10), AX
	LEAQ    (BX)(AX*4), R14
	MOVLQSX 8(R10), AX
	LEAQ    (BX)(AX*4), R15
	MOVLQSX 12(R10), AX
	LEAQ    (BX)(AX*4), AX
	XORQ    CX, CX      // offset of x[q]
	LEAQ    -4(DX), R9  // offset of x[taps-9-q], the first of the mirrored 8
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	VXORPS  Y4, Y4, Y4
	VXORPS  Y5, Y5, Y5
	VXORPS  Y6, Y6, Y6
	VXORPS  Y7, Y7, Y7

quadblk:
	CMPQ        CX, R12
	JGE         quadedge
	VMOVUPS     (SI)(CX*1), Y8
	VPERMPS     (R13)(R9*1), Y9, Y10
	VPERMPS     (R14)(R9*1), Y9, Y11
	VPERMPS     (R15)(R9*1), Y9, Y12
	VPERMPS     (AX)(R9*1), Y9, Y13
	VADDPS      (R13)(CX*1), Y10, Y10
	VADDPS      (R14)(CX*1), Y11, Y11
	VADDPS      (R15)(CX*1), Y12, Y12
	VADDPS      (AX)(CX*1), Y13, Y13
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y8, Y13, Y6
	ADDQ        $32, CX
	SUBQ        $32, R9
	CMPQ        CX, R12
	JGE         quadedge
	VMOVUPS     (SI)(CX*1), Y8
	VPERMPS     (R13)(R9*1), Y9, Y10
	VPERMPS     (R14)(R9*1), Y9, Y11
	VPERMPS     (R15)(R9*1), Y9, Y12
	VPERMPS     (AX)(R9*1), Y9, Y13
	VADDPS      (R13)(CX*1), Y10, Y10
	VADDPS      (R14)(CX*1), Y11, Y11
	VADDPS      (R15)(CX*1), Y12, Y12
	VADDPS      (AX)(CX*1), Y13, Y13
	VFMADD231PS Y8, Y10, Y1
	VFMADD231PS Y8, Y11, Y3
	VFMADD231PS Y8, Y12, Y5
	VFMADD231PS Y8, Y13, Y7
	ADDQ        $32, CX
	SUBQ        $32, R9
	JMP         quadblk

quadedge:
	VMOVUPS      (SI)(R12*1), Y8
	VFMADD231PS  (R13)(DX*1), Y8, Y0
	VFMADD231PS  (R14)(DX*1), Y8, Y2
	VFMADD231PS  (R15)(DX*1), Y8, Y4
	VFMADD231PS  (AX)(DX*1), Y8, Y6
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y5, Y4, Y4
	VADDPS       Y7, Y6, Y6
	VHADDPS      Y2, Y0, Y0 // a01 a23 b01 b23 | a45 a67 b45 b67
	VHADDPS      Y6, Y4, Y4 // c01 c23 d01 d23 | ...
	VHADDPS      Y4, Y0, Y0 // a0123 b0123 c0123 d0123 | a4567 ...
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVSS       X0, (DI)
	VEXTRACTPS   $1, X0, (DI)(R8*1)
	LEAQ         (DI)(R8*2), DI
	VEXTRACTPS   $2, X0, (DI)
	VEXTRACTPS   $3, X0, (DI)(R8*1)
	LEAQ         (DI)(R8*2), DI
	ADDQ         $16, R10
	SUBQ         $4, R11
	JMP          quad

single:
	TESTQ   R11, R11
	JEQ     fdone
	MOVLQSX (R10), AX
	LEAQ    (BX)(AX*4), R13
	XORQ    CX, CX
	LEAQ    -4(DX), R9
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1

oneblk:
	CMPQ        CX, R12
	JGE         oneedge
	VMOVUPS     (SI)(CX*1), Y8
	VPERMPS     (R13)(R9*1), Y9, Y10
	VADDPS      (R13)(CX*1), Y10, Y10
	VFMADD231PS Y8, Y10, Y0
	ADDQ        $32, CX
	SUBQ        $32, R9
	CMPQ        CX, R12
	JGE         oneedge
	VMOVUPS     (SI)(CX*1), Y8
	VPERMPS     (R13)(R9*1), Y9, Y10
	VADDPS      (R13)(CX*1), Y10, Y10
	VFMADD231PS Y8, Y10, Y1
	ADDQ        $32, CX
	SUBQ        $32, R9
	JMP         oneblk

oneedge: // in the order of quadedge
	VMOVUPS      (SI)(R12*1), Y8
	VFMADD231PS  (R13)(DX*1), Y8, Y0
	VADDPS       Y1, Y0, Y0
	VHADDPS      Y0, Y0, Y0
	VHADDPS      Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         R8, DI
	ADDQ         $4, R10
	DECQ         R11
	JMP          single

fdone:
	VZEROUPPER
	RET
