package io.rdma4j.cuda;

import io.rdma4j.cuda.ffi.Posix;
import io.rdma4j.engine.spi.DeviceMemory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A dma-buf file descriptor exported from GPU memory, with what {@code ibv_reg_dmabuf_mr(pd, offset, length, iova, fd,
 * access)} needs: {@link #offset()} is the buffer's start inside the fd ({@code pointer - aligned base}),
 * {@link #iova()} the buffer's device address. Closing closes the fd; a memory region registered from it stays valid
 * until deregistered.
 */
public final class DmaBuf implements DeviceMemory.DmaBufHandle {
    private final int fd;
    private final long base;
    private final long exportedLength;
    private final long offset;
    private final long iova;
    private final long length;
    private final AtomicBoolean closed = new AtomicBoolean();

    DmaBuf(int fd, long base, long exportedLength, long offset, long iova, long length) {
        this.fd = fd;
        this.base = base;
        this.exportedLength = exportedLength;
        this.offset = offset;
        this.iova = iova;
        this.length = length;
    }

    /** @return the dma-buf file descriptor */
    @Override
    public int fd() {
        return fd;
    }

    /** @return the page-aligned device address the fd starts at */
    public long base() {
        return base;
    }

    /** @return bytes the fd covers, whole host pages */
    public long exportedLength() {
        return exportedLength;
    }

    /** @return where the buffer starts inside the fd */
    @Override
    public long offset() {
        return offset;
    }

    /** @return the buffer's device address, the iova to register */
    @Override
    public long iova() {
        return iova;
    }

    /** @return the buffer's length */
    @Override
    public long length() {
        return length;
    }

    /** Closes the file descriptor. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true) && Posix.close(fd) != 0) {
            throw new IllegalStateException("close(" + fd + ") of a dma-buf failed");
        }
    }

    @Override
    public String toString() {
        return "DmaBuf[fd=" + fd + ", base=0x" + Long.toHexString(base) + ", exported=" + exportedLength + ", offset="
                + offset + ", length=" + length + "]";
    }
}
