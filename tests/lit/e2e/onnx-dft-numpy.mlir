// onnx-dft-numpy.mlir - ONNX DFT against numpy.fft (fft / ifft with n =
// dft_length, so truncation and zero padding are checked too) for real and
// complex signals, two axes, inverse and onesided. The script is
// Inputs/dft_against_numpy.py.

// RUN: %python %S/Inputs/dft_against_numpy.py %turbine %t | FileCheck %s

// CHECK:      complex=0 axis=1 length=None inverse=0 onesided=0: OK
// CHECK-NEXT: complex=0 axis=2 length=8 inverse=0 onesided=0: OK
// CHECK-NEXT: complex=1 axis=1 length=7 inverse=0 onesided=0: OK
// CHECK-NEXT: complex=1 axis=1 length=16 inverse=1 onesided=0: OK
// CHECK-NEXT: complex=0 axis=1 length=10 inverse=0 onesided=1: OK
