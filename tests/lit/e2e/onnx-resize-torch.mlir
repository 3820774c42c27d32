// onnx-resize-torch.mlir - ONNX Resize against torch.nn.functional.interpolate
// on a random 17x23 image resized to 40x11: bilinear and bicubic with
// half_pixel and align_corners, nearest (asymmetric + floor), each with
// static dims (import-time tap tables) and with every dim dynamic (taps
// computed in the kernel), |difference| <= 1e-5. The script is
// Inputs/resize_against_torch.py.

// RUN: %python %S/Inputs/resize_against_torch.py %turbine %t | FileCheck %s

// CHECK:      static linear half_pixel: OK
// CHECK-NEXT: static cubic half_pixel: OK
// CHECK-NEXT: static linear align_corners: OK
// CHECK-NEXT: static cubic align_corners: OK
// CHECK-NEXT: static nearest asymmetric: OK
// CHECK-NEXT: dynamic linear half_pixel: OK
// CHECK-NEXT: dynamic cubic half_pixel: OK
// CHECK-NEXT: dynamic linear align_corners: OK
// CHECK-NEXT: dynamic cubic align_corners: OK
// CHECK-NEXT: dynamic nearest asymmetric: OK
