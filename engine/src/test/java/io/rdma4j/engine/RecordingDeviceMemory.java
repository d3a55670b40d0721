package io.rdma4j.engine;

import io.rdma4j.engine.spi.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test double at the {@link DeviceMemory} boundary: "device" memory that is host memory, recording every hook the
 * engine calls, in order, on one sequence shared with {@link DeviceTestBackend}'s posts. This machine has no GPU; the
 * engine's ordering and staging logic is tested here with real bytes over libfabric, and the real proof with CUDA
 * memory is the GPU run ({@code scripts/gpu-check}). Public, with the backend, for other modules' engine tests (NVMe-oF
 * volumes).
 */
public final class RecordingDeviceMemory implements DeviceMemory {
    /** One recorded call: what, its place in the shared sequence, and the range it covered. */
    public record Event(String what, long seq, long offset, long length) {}

    public final MemorySegment memory;
    final String pci;
    final AtomicLong sequence;
    public final List<Event> events = new CopyOnWriteArrayList<>();
    /** When set, copies fail as a device error would (fault injection). */
    public volatile boolean failCopies;
    /** When 0 or more: that many more copies to host succeed, then the rest fail (fault injection). */
    public final AtomicLong failAfterCopies = new AtomicLong(-1);
    /** When 0 or more: that many more copies to the device succeed, then the rest fail (fault injection). */
    public final AtomicLong failAfterCopiesToDevice = new AtomicLong(-1);

    public RecordingDeviceMemory(MemorySegment memory, String pci, AtomicLong sequence) {
        this.memory = memory;
        this.pci = pci;
        this.sequence = sequence;
    }

    @Override
    public Kind kind() {
        return Kind.CUDA;
    }

    @Override
    public int deviceOrdinal() {
        return 0;
    }

    @Override
    public long address() {
        return memory.address();
    }

    @Override
    public long length() {
        return memory.byteSize();
    }

    @Override
    public String pciAddress() {
        return pci;
    }

    @Override
    public void beforeNicRead() {
        events.add(new Event("beforeNicRead", sequence.incrementAndGet(), 0, 0));
    }

    @Override
    public void afterNicWrite() {
        events.add(new Event("afterNicWrite", sequence.incrementAndGet(), 0, 0));
    }

    @Override
    public void copyToHost(long offset, MemorySegment target) {
        if (failCopies || failAfterCopies.getAndUpdate(n -> n > 0 ? n - 1 : n) == 0) {
            throw new IllegalStateException("injected device copy failure");
        }
        MemorySegment.copy(memory, offset, target, 0, target.byteSize());
        events.add(new Event("copyToHost", sequence.incrementAndGet(), offset, target.byteSize()));
    }

    @Override
    public void copyFromHost(MemorySegment source, long offset) {
        if (failAfterCopiesToDevice.getAndUpdate(n -> n > 0 ? n - 1 : n) == 0) {
            throw new IllegalStateException("injected device copy failure");
        }
        MemorySegment.copy(source, 0, memory, offset, source.byteSize());
        events.add(new Event("copyFromHost", sequence.incrementAndGet(), offset, source.byteSize()));
    }

    /** @return the recorded calls named {@code what} */
    public List<Event> named(String what) {
        return events.stream().filter(e -> e.what().equals(what)).toList();
    }

    /** @return the sequence number of the first call named {@code what}, failing when there was none */
    public long first(String what) {
        return named(what).stream()
                .mapToLong(Event::seq)
                .min()
                .orElseThrow(() -> new AssertionError("no " + what + " in " + events));
    }

    @Override
    public String toString() {
        return "RecordingDeviceMemory[" + memory.byteSize() + " bytes, " + pci + "]";
    }
}
