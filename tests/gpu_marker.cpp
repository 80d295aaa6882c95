// Linked into gpu-labelled test binaries only: tells the shared main to skip without a device.
extern "C" int cachewise_test_is_gpu_binary() { return 1; }
