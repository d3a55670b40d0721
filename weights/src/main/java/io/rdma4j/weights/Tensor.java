package io.rdma4j.weights;

import io.rdma4j.InvalidArgumentException;
import io.rdma4j.engine.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * One named tensor and its memory: host memory (a {@link MemorySegment}, possibly a slice of a mapped
 * {@code .safetensors} file) or registered device memory. The memory holds the tensor's elements in row-major order.
 */
public final class Tensor {
    private final String name;
    private final DType dtype;
    private final long[] shape;
    private final MemorySegment host;
    private final DeviceMemory device;

    private Tensor(String name, DType dtype, long[] shape, MemorySegment host, DeviceMemory device) {
        this.name = Objects.requireNonNull(name, "name");
        this.dtype = Objects.requireNonNull(dtype, "dtype");
        this.shape = shape.clone();
        this.host = host;
        this.device = device;
        if (name.isEmpty() || name.length() > 1024) {
            throw new InvalidArgumentException("tensor name must have 1 to 1024 characters, got " + name.length());
        }
        long bytes = byteSize(dtype, this.shape);
        long have = host != null ? host.byteSize() : device.length();
        if (have != bytes) {
            throw new InvalidArgumentException("tensor " + name + " " + dtype + Arrays.toString(shape) + " takes "
                    + bytes + " bytes but its memory has " + have + ": pass a memory of exactly that size");
        }
    }

    /**
     * {@return a tensor in host memory}
     *
     * @param name its name
     * @param dtype its element type
     * @param shape its shape (empty for a scalar)
     * @param memory exactly {@code product(shape) * dtype.byteSize()} bytes
     */
    public static Tensor host(String name, DType dtype, long[] shape, MemorySegment memory) {
        return new Tensor(name, dtype, shape, Objects.requireNonNull(memory, "memory"), null);
    }

    /**
     * {@return a tensor in device (GPU) memory}
     *
     * @param name its name
     * @param dtype its element type
     * @param shape its shape
     * @param memory exactly {@code product(shape) * dtype.byteSize()} bytes of device memory
     */
    public static Tensor device(String name, DType dtype, long[] shape, DeviceMemory memory) {
        return new Tensor(name, dtype, shape, null, Objects.requireNonNull(memory, "memory"));
    }

    /**
     * {@return {@code product(shape) * dtype.byteSize()}}
     *
     * @throws InvalidArgumentException when a dimension is negative or the size overflows a long
     */
    public static long byteSize(DType dtype, long[] shape) {
        long n = dtype.byteSize();
        for (long d : shape) {
            if (d < 0) {
                throw new InvalidArgumentException("negative dimension in shape " + Arrays.toString(shape));
            }
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new InvalidArgumentException(
                        "shape " + Arrays.toString(shape) + " of " + dtype + " overflows 63 bits of bytes");
            }
        }
        return n;
    }

    /** {@return its name} */
    public String name() {
        return name;
    }

    /** {@return its element type} */
    public DType dtype() {
        return dtype;
    }

    /** {@return a copy of its shape} */
    public long[] shape() {
        return shape.clone();
    }

    /** {@return its size in bytes} */
    public long byteSize() {
        return host != null ? host.byteSize() : device.length();
    }

    /** {@return its host memory, or null when it lives on a device} */
    public MemorySegment host() {
        return host;
    }

    /** {@return its device memory, or null when it lives in host memory} */
    public DeviceMemory device() {
        return device;
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape) + (device != null ? " on device" : "");
    }
}
