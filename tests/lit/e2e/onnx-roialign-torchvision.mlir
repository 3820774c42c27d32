// onnx-roialign-torchvision.mlir - ONNX RoiAlign (avg) against
// torchvision.ops.roi_align on random data with rois inside, partly and
// wholly outside the image, for both coordinate transformation modes and two
// spatial scales (|difference| <= 1e-5). The script is
// Inputs/roialign_against_torchvision.py.

// RUN: %python %S/Inputs/roialign_against_torchvision.py %turbine %t | FileCheck %s

// CHECK:      half_pixel scale=1.0: OK
// CHECK-NEXT: half_pixel scale=0.5: OK
// CHECK-NEXT: output_half_pixel scale=1.0: OK
// CHECK-NEXT: output_half_pixel scale=0.5: OK
