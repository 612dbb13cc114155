#!/usr/bin/env python3
"""Prints each OpenCL device's extensions, one per line, through the ICD loader found by ctypes.

For a machine where nothing can be installed (the GPU machine of tools/gpu-check.sh): no clinfo,
no pyopencl. `cl_extensions.py [WORD...]` prints only the extensions that contain one of the words.
"""
import ctypes
import ctypes.util
import sys

CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
CL_DEVICE_NAME = 0x102B
CL_DEVICE_EXTENSIONS = 0x1030
CL_DEVICE_VERSION = 0x102F


def load_loader():
    for name in ("libOpenCL.so.1", ctypes.util.find_library("OpenCL"), "OpenCL.dll"):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    sys.exit("cl_extensions: no OpenCL ICD loader found (libOpenCL.so.1) — put its folder on LD_LIBRARY_PATH")


def info(cl, device, key):
    size = ctypes.c_size_t(0)
    if cl.clGetDeviceInfo(device, key, 0, None, ctypes.byref(size)) != 0:
        return ""
    buf = ctypes.create_string_buffer(size.value)
    cl.clGetDeviceInfo(device, key, size, buf, None)
    return buf.value.decode(errors="replace")


def main():
    words = sys.argv[1:]
    cl = load_loader()
    count = ctypes.c_uint(0)
    if cl.clGetPlatformIDs(0, None, ctypes.byref(count)) != 0 or count.value == 0:
        sys.exit("cl_extensions: no OpenCL platform")
    platforms = (ctypes.c_void_p * count.value)()
    cl.clGetPlatformIDs(count, platforms, None)
    for platform in platforms:
        n = ctypes.c_uint(0)
        if cl.clGetDeviceIDs(ctypes.c_void_p(platform), CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(n)) != 0:
            continue
        devices = (ctypes.c_void_p * n.value)()
        cl.clGetDeviceIDs(ctypes.c_void_p(platform), CL_DEVICE_TYPE_ALL, n, devices, None)
        for device in devices:
            d = ctypes.c_void_p(device)
            print(f"{info(cl, d, CL_DEVICE_NAME)} ({info(cl, d, CL_DEVICE_VERSION)}):")
            for ext in sorted(info(cl, d, CL_DEVICE_EXTENSIONS).split()):
                if not words or any(w in ext for w in words):
                    print(f"  {ext}")


if __name__ == "__main__":
    main()
