package io.rdma4j.engine.internal;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * RAID-0 arithmetic of a volume: which namespace, and where in it, each volume byte lives. Namespaces of unequal size
 * are striped in zones, as Linux md does: zone 0 stripes over every namespace up to the smallest one's size, zone 1
 * over the rest up to the next size, and so on; a namespace's tail below one stripe unit is not used. Immutable.
 */
public final class StripeMap {
    private final long unit;
    private final int members;
    /** Per zone: first volume unit, first member unit, members striped (in volume order). */
    private final long[] zoneVolumeStart;

    private final long[] zoneMemberStart;
    private final int[][] zoneMembers;
    private final long totalUnits;

    /**
     * @param unit stripe unit in bytes (positive)
     * @param memberBytes each namespace's size in bytes, in striping order
     */
    public StripeMap(long unit, long[] memberBytes) {
        if (unit <= 0) {
            throw new IllegalArgumentException("stripe unit must be positive, got " + unit);
        }
        if (memberBytes.length == 0) {
            throw new IllegalArgumentException("a volume needs at least one namespace");
        }
        this.unit = unit;
        this.members = memberBytes.length;
        long[] units = new long[members];
        for (int i = 0; i < members; i++) {
            units[i] = memberBytes[i] / unit;
        }
        long[] sizes =
                Arrays.stream(units).filter(u -> u > 0).distinct().sorted().toArray();
        List<long[]> starts = new ArrayList<>();
        List<int[]> zm = new ArrayList<>();
        long prev = 0;
        long volume = 0;
        for (long size : sizes) {
            int[] in = new int[members];
            int k = 0;
            for (int i = 0; i < members; i++) {
                if (units[i] >= size) {
                    in[k++] = i;
                }
            }
            starts.add(new long[] {volume, prev});
            zm.add(Arrays.copyOf(in, k));
            volume += (size - prev) * k;
            prev = size;
        }
        this.zoneVolumeStart = starts.stream().mapToLong(s -> s[0]).toArray();
        this.zoneMemberStart = starts.stream().mapToLong(s -> s[1]).toArray();
        this.zoneMembers = zm.toArray(new int[0][]);
        this.totalUnits = volume;
    }

    /** @return usable bytes of the volume */
    public long capacity() {
        return totalUnits * unit;
    }

    public long unit() {
        return unit;
    }

    public int members() {
        return members;
    }

    /** @return the namespace holding volume byte {@code offset} ({@code 0 <= offset < capacity}) */
    public int member(long offset) {
        long u = offset < 0 ? -1 : offset / unit;
        int z = zone(u);
        long rel = u - zoneVolumeStart[z];
        return zoneMembers[z][(int) (rel % zoneMembers[z].length)];
    }

    /** @return where volume byte {@code offset} lives in its namespace */
    public long memberOffset(long offset) {
        long u = offset < 0 ? -1 : offset / unit;
        int z = zone(u);
        long rel = u - zoneVolumeStart[z];
        return (zoneMemberStart[z] + rel / zoneMembers[z].length) * unit + offset % unit;
    }

    private int zone(long u) {
        if (u < 0 || u >= totalUnits) {
            throw new IndexOutOfBoundsException("volume unit " + u + " is outside 0.." + (totalUnits - 1));
        }
        int z = zoneVolumeStart.length - 1;
        while (zoneVolumeStart[z] > u) {
            z--;
        }
        return z;
    }

    /**
     * The pieces of volume range [offset, offset + length): per namespace, in ascending order, where each piece starts
     * in the range ({@code rangeOffset}), in the namespace ({@code memberOffset}) and how long it is. A piece never
     * crosses a stripe unit; pieces of the same namespace that are adjacent there and in the range are merged up to
     * {@code maxPiece} bytes (a volume of one namespace thus issues {@code maxPiece} commands, not stripe units).
     */
    public Pieces split(long offset, long length, long maxPiece) {
        int[] count = new int[members];
        forEach(offset, length, maxPiece, (m, r, mo, n) -> count[m]++);
        Pieces p = new Pieces(count);
        int[] fill = new int[members];
        forEach(offset, length, maxPiece, (m, r, mo, n) -> {
            int i = fill[m]++;
            p.rangeOffset[m][i] = r;
            p.memberOffset[m][i] = mo;
            p.length[m][i] = n;
        });
        return p;
    }

    private interface PieceSink {
        void piece(int member, long rangeOffset, long memberOffset, long length);
    }

    private void forEach(long offset, long length, long maxPiece, PieceSink sink) {
        int[] pendingMember = {-1};
        long pr = 0;
        long pmo = 0;
        long pn = 0;
        long done = 0;
        while (done < length) {
            long v = offset + done;
            int m = member(v);
            long mo = memberOffset(v);
            long n = Math.min(unit - v % unit, length - done);
            if (pendingMember[0] == m && pmo + pn == mo && pn + n <= maxPiece) {
                pn += n;
            } else {
                if (pendingMember[0] >= 0) {
                    sink.piece(pendingMember[0], pr, pmo, pn);
                }
                pendingMember[0] = m;
                pr = done;
                pmo = mo;
                pn = n;
            }
            done += n;
        }
        if (pendingMember[0] >= 0) {
            sink.piece(pendingMember[0], pr, pmo, pn);
        }
    }

    /** Pieces per namespace; arrays indexed [member][piece]. */
    public static final class Pieces {
        public final long[][] rangeOffset;
        public final long[][] memberOffset;
        public final long[][] length;

        Pieces(int[] count) {
            int n = count.length;
            rangeOffset = new long[n][];
            memberOffset = new long[n][];
            length = new long[n][];
            for (int m = 0; m < n; m++) {
                rangeOffset[m] = new long[count[m]];
                memberOffset[m] = new long[count[m]];
                length[m] = new long[count[m]];
            }
        }

        public int count(int member) {
            return length[member].length;
        }

        public long bytes(int member) {
            long b = 0;
            for (long l : length[member]) {
                b += l;
            }
            return b;
        }
    }
}
