package io.rdma4j.libfabric.engine;

import io.rdma4j.libfabric.RemoteRegion;

/**
 * A lane's remote regions by key: a tiny open-addressing map from long keys to regions, looked up per chunk without
 * boxing. Used under the lane's lock.
 */
final class RemoteRegionCache {
    private long[] keys = new long[16];
    private RemoteRegion[] values = new RemoteRegion[16];
    private int size;

    RemoteRegion get(long key) {
        int mask = keys.length - 1;
        for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
            RemoteRegion v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == key) {
                return v;
            }
        }
    }

    void put(long key, RemoteRegion value) {
        if ((size + 1) * 2 > keys.length) {
            long[] ok = keys;
            RemoteRegion[] ov = values;
            keys = new long[ok.length * 2];
            values = new RemoteRegion[ov.length * 2];
            size = 0;
            for (int i = 0; i < ok.length; i++) {
                if (ov[i] != null) {
                    put(ok[i], ov[i]);
                }
            }
        }
        int mask = keys.length - 1;
        int i = mix(key) & mask;
        while (values[i] != null && keys[i] != key) {
            i = (i + 1) & mask;
        }
        if (values[i] == null) {
            size++;
        }
        keys[i] = key;
        values[i] = value;
    }

    private static int mix(long k) {
        long h = k * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }
}
