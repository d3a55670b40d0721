package io.rdma4j.ibverbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.rdma4j.ffi.Errno;
import io.rdma4j.ffi.Libc;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Real dma-buf file descriptors for the guest tests, from the kernel's virtual GEM driver ({@code vgem}): a dumb buffer
 * ({@code DRM_IOCTL_MODE_CREATE_DUMB}) exported with {@code DRM_IOCTL_PRIME_HANDLE_TO_FD}. The Debian 12 guest kernel
 * builds {@code vgem} as a module but not {@code udmabuf} ({@code CONFIG_UDMABUF} is unset in its config), so this is
 * the dma-buf exporter every guest has.
 */
final class Vgem implements AutoCloseable {
    // include/uapi/drm/drm.h and drm_mode.h (libdrm-dev is not installed here, so these are not gcc-checked: the
    // guest's ioctls reject a wrong size or number with EINVAL/ENOTTY, which the tests would show)
    /** struct drm_mode_create_dumb { __u32 height, width, bpp, flags; __u32 handle, pitch; __u64 size; }: 32 bytes. */
    private static final long CREATE_DUMB_SIZE = 32;
    /** DRM_IOWR(0xB2, struct drm_mode_create_dumb). */
    private static final long DRM_IOCTL_MODE_CREATE_DUMB = ioWr('d', 0xB2, CREATE_DUMB_SIZE);
    /** struct drm_prime_handle { __u32 handle; __u32 flags; __s32 fd; }: 12 bytes. */
    private static final long PRIME_HANDLE_SIZE = 12;
    /** DRM_IOWR(0x2d, struct drm_prime_handle). */
    private static final long DRM_IOCTL_PRIME_HANDLE_TO_FD = ioWr('d', 0x2d, PRIME_HANDLE_SIZE);

    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle OPEN = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("open"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
            Errno.OPTION,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle IOCTL = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("ioctl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
            Errno.OPTION,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));

    private final int device;

    private Vgem(int device) {
        this.device = device;
    }

    static long ioWr(char type, int nr, long size) {
        return (3L << 30) | (size << 16) | ((long) type << 8) | nr;
    }

    /** Loads vgem and opens its card node; fails (does not skip) when the guest cannot, naming why. */
    static Vgem open() throws IOException, InterruptedException {
        Process p =
                new ProcessBuilder("modprobe", "vgem").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("modprobe vgem failed (exit " + p.exitValue() + "): " + out);
        }
        // vgem registers a bare platform device named "vgem" (no platform driver): its card's device is
        // /sys/devices/platform/vgem
        java.util.Map<Path, String> devices = new java.util.TreeMap<>();
        try (Stream<Path> cards = Files.list(Path.of("/sys/class/drm"))) {
            cards.filter(c -> c.getFileName().toString().matches("card\\d+")).forEach(c -> {
                try {
                    devices.put(c, c.resolve("device").toRealPath().toString());
                } catch (IOException e) {
                    devices.put(c, e.toString());
                }
            });
        }
        Path card = devices.entrySet().stream()
                .filter(e -> e.getValue().endsWith("/vgem"))
                .map(java.util.Map.Entry::getKey)
                .findFirst()
                .orElseThrow(
                        () -> new AssertionError("vgem loaded but no /sys/class/drm/card* belongs to it: " + devices));
        Path node = Path.of("/dev/dri", card.getFileName().toString());
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            int fd = (int) OPEN.invokeExact(cap, a.allocateFrom(node.toString()), O_RDWR | O_CLOEXEC, 0);
            if (fd < 0) {
                int e = Errno.read(cap);
                throw new AssertionError("open(" + node + ") failed: " + e + " (" + Libc.strerror(e) + ")");
            }
            return new Vgem(fd);
        } catch (Throwable t) {
            throw t instanceof AssertionError ae ? ae : new AssertionError(t);
        }
    }

    /** A new dma-buf of {@code size} bytes (a multiple of 4096), as a read-write, close-on-exec file descriptor. */
    int dmabuf(long size) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment cap = Errno.newCapture(a);
            MemorySegment dumb = a.allocate(CREATE_DUMB_SIZE, 8);
            dumb.set(JAVA_INT, 0, (int) (size / 4096)); // height
            dumb.set(JAVA_INT, 4, 1024); // width in 32-bit pixels: 4096-byte rows
            dumb.set(JAVA_INT, 8, 32); // bpp
            check(
                    (int) IOCTL.invokeExact(cap, device, DRM_IOCTL_MODE_CREATE_DUMB, dumb),
                    cap,
                    "DRM_IOCTL_MODE_CREATE_DUMB");
            if (dumb.get(JAVA_LONG, 24) < size) {
                throw new AssertionError("vgem made a " + dumb.get(JAVA_LONG, 24) + "-byte buffer for " + size);
            }
            MemorySegment prime = a.allocate(PRIME_HANDLE_SIZE, 4);
            prime.set(JAVA_INT, 0, dumb.get(JAVA_INT, 16)); // handle
            prime.set(JAVA_INT, 4, O_CLOEXEC | O_RDWR); // DRM_CLOEXEC | DRM_RDWR
            prime.set(JAVA_INT, 8, -1);
            check(
                    (int) IOCTL.invokeExact(cap, device, DRM_IOCTL_PRIME_HANDLE_TO_FD, prime),
                    cap,
                    "DRM_IOCTL_PRIME_HANDLE_TO_FD");
            return prime.get(JAVA_INT, 8);
        } catch (Throwable t) {
            throw t instanceof AssertionError ae ? ae : new AssertionError(t);
        }
    }

    private static void check(int rc, MemorySegment cap, String what) {
        if (rc != 0) {
            int e = Errno.read(cap);
            throw new AssertionError(what + " on vgem failed: " + e + " (" + Libc.strerror(e) + ")");
        }
    }

    static void closeFd(int fd) {
        try {
            int rc = (int) CLOSE.invokeExact(fd);
            if (rc != 0) {
                throw new AssertionError("close(" + fd + ") failed");
            }
        } catch (Throwable t) {
            throw t instanceof AssertionError ae ? ae : new AssertionError(t);
        }
    }

    /** @return whether {@code /proc/self/fd/FD} names a dma-buf */
    static boolean isDmabuf(int fd) throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString().contains("dmabuf");
    }

    @Override
    public void close() {
        closeFd(device);
    }
}
