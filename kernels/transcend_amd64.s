//go:build !noasm

#include "textflag.h"

// ExpNeg and Log1pUnit on eight lanes, step for step as ExpNegOf and
// Log1pUnitOf compute them (transcend.go), so that the bits agree. A lane
// outside the fast path's range (compared with the negated, unordered
// predicates NGE_UQ and NLE_UQ, so that NaN counts) sets a bit of K5; the
// Go side fixes such lanes. The last len%8 lanes are loaded and stored under a mask, their
// other lanes zero, which is in range.

// EXPNEG8 sets Z6 to e^Z0 by the fast path and ORs the lanes outside
// [−708, 0] (or NaN) into K5. Constants: Z31 16/log 2, Z30 the shift,
// Z29 and Z28 log 2/16's two parts, Z27 −708, Z26 0, Z25…Z20 1/7!…1/2!,
// Z19 1, Z18 and Z17 the table, Z16 the integer 15.
#define EXPNEG8 \
	VCMPPD      $0x19, Z27, Z0, K1     \
	VCMPPD      $0x16, Z26, Z0, K2     \
	KORW        K1, K5, K5             \
	KORW        K2, K5, K5             \
	VMULPD      Z31, Z0, Z1            \
	VADDPD      Z30, Z1, Z1            \
	VPANDQ      Z16, Z1, Z2            \
	VPSRAQ      $4, Z1, Z3             \
	VPSLLQ      $52, Z3, Z3            \
	VSUBPD      Z30, Z1, Z1            \
	VMULPD      Z29, Z1, Z4            \
	VSUBPD      Z4, Z0, Z4             \
	VMULPD      Z28, Z1, Z5            \
	VSUBPD      Z5, Z4, Z4             \
	VMOVAPD     Z25, Z6                \
	VFMADD213PD Z24, Z4, Z6            \
	VFMADD213PD Z23, Z4, Z6            \
	VFMADD213PD Z22, Z4, Z6            \
	VFMADD213PD Z21, Z4, Z6            \
	VFMADD213PD Z20, Z4, Z6            \
	VFMADD213PD Z19, Z4, Z6            \
	VMULPD      Z4, Z6, Z6             \
	VMOVDQA64   Z2, Z7                 \
	VPERMI2PD   Z17, Z18, Z7           \
	VPADDQ      Z3, Z7, Z7             \
	VFMADD213PD Z7, Z7, Z6

// func expNegAVX512Asm(dst, x *float64, n int, table *[16]float64, c *[13]float64) (ok bool)
TEXT ·expNegAVX512Asm(SB), NOSPLIT, $0-41
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         table+24(FP), R8
	MOVQ         c+32(FP), R9
	VBROADCASTSD 0(R9), Z31
	VBROADCASTSD 8(R9), Z30
	VBROADCASTSD 16(R9), Z29
	VBROADCASTSD 24(R9), Z28
	VBROADCASTSD 32(R9), Z27
	VBROADCASTSD 40(R9), Z26
	VBROADCASTSD 48(R9), Z25
	VBROADCASTSD 56(R9), Z24
	VBROADCASTSD 64(R9), Z23
	VBROADCASTSD 72(R9), Z22
	VBROADCASTSD 80(R9), Z21
	VBROADCASTSD 88(R9), Z20
	VBROADCASTSD 96(R9), Z19
	VMOVUPD      0(R8), Z18
	VMOVUPD      64(R8), Z17
	MOVQ         $15, BX
	VPBROADCASTQ BX, Z16
	KXORW        K5, K5, K5
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $~7, DX
	JZ           exptail

exp8:
	VMOVUPD (SI)(AX*8), Z0
	EXPNEG8
	VMOVUPD Z6, (DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JNE     exp8

exptail:
	SUBQ      AX, CX
	JZ        expdone
	MOVL      $1, BX
	SHLL      CX, BX
	DECL      BX
	KMOVW     BX, K6
	VMOVUPD.Z (SI)(AX*8), K6, Z0
	EXPNEG8
	VMOVUPD   Z6, K6, (DI)(AX*8)

expdone:
	KORTESTW K5, K5
	SETEQ    ok+40(FP)
	VZEROUPPER
	RET

// LOG1P8 sets Z6 to log(1 + Z0) by the fast path and ORs the lanes
// outside [0, 1] (or NaN) into K5. Constants: Z31 1, Z30 2, Z29 ½, Z28 √2,
// Z27 and Z26 log 2's two parts, Z25…Z19 fdlibm's Lg1…Lg7, Z18 0.
#define LOG1P8 \
	VCMPPD      $0x19, Z18, Z0, K1     \
	VCMPPD      $0x16, Z31, Z0, K2     \
	KORW        K1, K5, K5             \
	KORW        K2, K5, K5             \
	VADDPD      Z31, Z0, Z1            \
	VSUBPD      Z31, Z1, Z2            \
	VSUBPD      Z2, Z0, Z2             \
	VSUBPD      Z31, Z1, Z3            \
	VCMPPD      $0x1D, Z28, Z1, K3     \
	VMULPD      Z29, Z1, Z4            \
	VSUBPD      Z31, Z4, K3, Z3        \
	VXORPD      Z5, Z5, Z5             \
	VMOVAPD     Z31, K3, Z5            \
	VDIVPD      Z1, Z2, Z2             \
	VADDPD      Z30, Z3, Z6            \
	VDIVPD      Z6, Z3, Z6             \
	VMULPD      Z6, Z6, Z7             \
	VMULPD      Z7, Z7, Z8             \
	VMOVAPD     Z20, Z9                \
	VFMADD213PD Z22, Z8, Z9            \
	VFMADD213PD Z24, Z8, Z9            \
	VMULPD      Z8, Z9, Z9             \
	VMOVAPD     Z19, Z10               \
	VFMADD213PD Z21, Z8, Z10           \
	VFMADD213PD Z23, Z8, Z10           \
	VFMADD213PD Z25, Z8, Z10           \
	VMULPD      Z7, Z10, Z10           \
	VADDPD      Z9, Z10, Z10           \
	VMULPD      Z29, Z3, Z11           \
	VMULPD      Z3, Z11, Z11           \
	VADDPD      Z10, Z11, Z12          \
	VMULPD      Z12, Z6, Z12           \
	VMULPD      Z26, Z5, Z13           \
	VADDPD      Z2, Z13, Z13           \
	VADDPD      Z13, Z12, Z12          \
	VSUBPD      Z12, Z11, Z12          \
	VSUBPD      Z3, Z12, Z12           \
	VMULPD      Z27, Z5, Z13           \
	VSUBPD      Z12, Z13, Z6

// func log1pUnitAVX512Asm(dst, x *float64, n int, c *[14]float64) (ok bool)
TEXT ·log1pUnitAVX512Asm(SB), NOSPLIT, $0-33
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVQ         c+24(FP), R9
	VBROADCASTSD 0(R9), Z31
	VBROADCASTSD 8(R9), Z30
	VBROADCASTSD 16(R9), Z29
	VBROADCASTSD 24(R9), Z28
	VBROADCASTSD 32(R9), Z27
	VBROADCASTSD 40(R9), Z26
	VBROADCASTSD 48(R9), Z25
	VBROADCASTSD 56(R9), Z24
	VBROADCASTSD 64(R9), Z23
	VBROADCASTSD 72(R9), Z22
	VBROADCASTSD 80(R9), Z21
	VBROADCASTSD 88(R9), Z20
	VBROADCASTSD 96(R9), Z19
	VBROADCASTSD 104(R9), Z18
	KXORW        K5, K5, K5
	XORQ         AX, AX
	MOVQ         CX, DX
	ANDQ         $~7, DX
	JZ           logtail

log8:
	VMOVUPD (SI)(AX*8), Z0
	LOG1P8
	VMOVUPD Z6, (DI)(AX*8)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JNE     log8

logtail:
	SUBQ      AX, CX
	JZ        logdone
	MOVL      $1, BX
	SHLL      CX, BX
	DECL      BX
	KMOVW     BX, K6
	VMOVUPD.Z (SI)(AX*8), K6, Z0
	LOG1P8
	VMOVUPD   Z6, K6, (DI)(AX*8)

logdone:
	KORTESTW K5, K5
	SETEQ    ok+32(FP)
	VZEROUPPER
	RET
