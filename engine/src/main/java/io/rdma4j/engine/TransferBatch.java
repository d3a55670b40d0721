package io.rdma4j.engine;

import java.util.AbstractList;
import java.util.ArrayList;
import java.util.List;
import java.util.RandomAccess;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The transfers of one {@link TransferEngine#writeAll batch}, in request order, with one future for all of them:
 * {@code engine.writeAll(requests).join()}.
 */
public final class TransferBatch extends AbstractList<Transfer> implements RandomAccess {
    private final List<Transfer> transfers;
    private final CompletableFuture<List<TransferResult>> future = new CompletableFuture<>();

    private TransferBatch(List<Transfer> transfers) {
        this.transfers = List.copyOf(transfers);
        CompletableFuture<?>[] all = new CompletableFuture<?>[this.transfers.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = this.transfers.get(i).future();
        }
        CompletableFuture.allOf(all).whenComplete((v, e) -> finish());
    }

    /**
     * {@return a batch of {@code transfers}, in that order}
     *
     * @param transfers the batch's transfers
     */
    public static TransferBatch of(List<Transfer> transfers) {
        return new TransferBatch(transfers);
    }

    /** Every transfer ended: the results in order, or the failure of the first one (in request order) that failed. */
    private void finish() {
        List<TransferResult> results = new ArrayList<>(transfers.size());
        for (Transfer t : transfers) {
            CompletableFuture<TransferResult> f = t.future();
            if (f.isCompletedExceptionally()) {
                try {
                    f.join();
                } catch (CompletionException e) {
                    future.completeExceptionally(e.getCause() == null ? e : e.getCause());
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                }
                return;
            }
            results.add(f.join());
        }
        future.complete(List.copyOf(results));
    }

    /**
     * {@return a future that completes once every transfer of the batch ended: with their results in request order, or
     * with the failure of the first transfer (in request order) that failed}
     */
    public CompletableFuture<List<TransferResult>> future() {
        return future;
    }

    /**
     * Waits for every transfer of the batch.
     *
     * @return their results, in request order
     * @throws RuntimeException the failure of the first transfer (in request order) that failed, as
     *     {@link Transfer#join()} throws it
     */
    public List<TransferResult> join() {
        try {
            return future.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    @Override
    public Transfer get(int index) {
        return transfers.get(index);
    }

    @Override
    public int size() {
        return transfers.size();
    }
}
