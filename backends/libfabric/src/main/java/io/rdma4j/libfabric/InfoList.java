package io.rdma4j.libfabric;

import static io.rdma4j.libfabric.ffi.FabricH.INFO_NEXT;

import io.rdma4j.Rdma4jException;
import io.rdma4j.libfabric.ffi.Fi;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;

/**
 * The matches of one {@code fi_getinfo} call, owning the native list ({@code fi_freeinfo} on close). Open a
 * {@link Fabric} from an entry while the list is open; the fabric keeps its own copy ({@code fi_dupinfo}).
 */
public final class InfoList extends AbstractList<Info> implements AutoCloseable {
    private final List<Info> infos = new ArrayList<>();
    private final Hints hints;
    private long head;

    InfoList(long head, Hints hints) {
        this.head = head;
        this.hints = hints;
        for (long p = head; p != 0; p = Fi.getLong(p + INFO_NEXT)) {
            infos.add(new Info(this, p));
        }
    }

    @Override
    public Info get(int index) {
        return infos.get(index);
    }

    @Override
    public int size() {
        return infos.size();
    }

    /** @return the provider's first (preferred) match; fails clearly when nothing matched */
    public Info first() {
        if (infos.isEmpty()) {
            throw new Rdma4jException("no libfabric provider matches " + hints
                    + ": Libfabric.getinfo(Hints.none()) lists every provider usable here");
        }
        return infos.get(0);
    }

    synchronized boolean isOpen() {
        return head != 0 || infos.isEmpty();
    }

    @Override
    public synchronized void close() {
        if (head != 0) {
            try {
                Fi.FI_FREEINFO.handle().invokeExact(head);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(t);
            }
            head = 0;
        }
    }
}
