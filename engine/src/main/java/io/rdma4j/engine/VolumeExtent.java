package io.rdma4j.engine;

/**
 * A range of a {@link StorageVolume}: {@code length} bytes from logical block {@code startLba} (in units of the
 * volume's {@link StorageVolume#blockSize()}). Made by {@link StorageVolume#extent}, which checks the bounds.
 *
 * @param volume the volume
 * @param startLba first logical block of the volume
 * @param length bytes, a multiple of the block size
 */
public record VolumeExtent(StorageVolume volume, long startLba, long length) {
    /** {@return the extent's first byte in the volume} */
    public long byteOffset() {
        return startLba * volume.blockSize();
    }

    @Override
    public String toString() {
        return "extent[LBA " + startLba + ", " + length + " bytes of " + volume.name() + "]";
    }
}
