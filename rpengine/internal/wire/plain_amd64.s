//go:build amd64 && !purego

#include "textflag.h"

// func plainAVX2(s []byte) int
// Signed bytes greater than 0x1F are 0x20..0x7F: printable ASCII. A byte
// is plain when it is one of those and neither '"' nor '\\'. The loop
// takes 64 bytes a step and finds the byte in a second pass over the
// block that has it.
TEXT ·plainAVX2(SB), NOSPLIT, $0-32
	MOVQ         s_base+0(FP), SI
	MOVQ         s_len+8(FP), CX
	MOVQ         SI, DI
	// The legacy-SSE MOVQs all come before the first VEX write to a Y
	// register: one after it costs an SSE/AVX transition (~0.5 us a call).
	MOVQ         $0x1f1f1f1f1f1f1f1f, AX
	MOVQ         AX, X1
	MOVQ         $0x2222222222222222, AX
	MOVQ         AX, X2
	MOVQ         $0x5c5c5c5c5c5c5c5c, AX
	MOVQ         AX, X3
	VPBROADCASTQ X1, Y1
	VPBROADCASTQ X2, Y2
	VPBROADCASTQ X3, Y3

loop64:
	CMPQ      CX, $64
	JB        loop32
	VMOVDQU   (SI), Y0
	VMOVDQU   32(SI), Y7
	VPCMPGTB  Y1, Y0, Y4
	VPCMPEQB  Y2, Y0, Y5
	VPCMPEQB  Y3, Y0, Y6
	VPOR      Y5, Y6, Y5
	VPANDN    Y4, Y5, Y4
	VPCMPGTB  Y1, Y7, Y8
	VPCMPEQB  Y2, Y7, Y5
	VPCMPEQB  Y3, Y7, Y6
	VPOR      Y5, Y6, Y5
	VPANDN    Y8, Y5, Y8
	VPAND     Y4, Y8, Y9
	VPMOVMSKB Y9, AX
	CMPL      AX, $0xffffffff
	JNE       loop32 // the byte is in this block: find it 32 bytes a step
	ADDQ      $64, SI
	SUBQ      $64, CX
	JMP       loop64

loop32:
	CMPQ      CX, $32
	JB        done
	VMOVDQU   (SI), Y0
	VPCMPGTB  Y1, Y0, Y4 // printable: 0xff
	VPCMPEQB  Y2, Y0, Y5 // '"'
	VPCMPEQB  Y3, Y0, Y6 // '\\'
	VPOR      Y5, Y6, Y5
	VPANDN    Y4, Y5, Y4 // printable and not a quote or backslash
	VPMOVMSKB Y4, AX
	NOTL      AX
	TESTL     AX, AX
	JNZ       found
	ADDQ      $32, SI
	SUBQ      $32, CX
	JMP       loop32

found:
	BSFL AX, AX
	ADDQ AX, SI

done:
	SUBQ       DI, SI
	VZEROUPPER
	MOVQ       SI, ret+24(FP)
	RET
