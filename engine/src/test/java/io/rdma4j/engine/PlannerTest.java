package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.engine.internal.Level;
import io.rdma4j.engine.internal.Planner;
import io.rdma4j.engine.internal.Planner.Candidate;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The planner on its own: best-level filtering, the small-transfer threshold, bandwidth-weighted contiguous stripes.
 */
class PlannerTest {
    static Candidate c(int lane, Level local, Level remote, double w) {
        return new Candidate(lane, "nic" + lane, local, lane, "rnic" + lane, remote, w);
    }

    @Test
    void keepsOnlyTheBestLevelPairs() {
        List<Candidate> best = Planner.best(List.of(
                c(0, Level.SYS, Level.PIX, 100),
                c(1, Level.PIX, Level.PIX, 100),
                c(2, Level.PIX, Level.PXB, 100),
                c(3, Level.PIX, Level.PIX, 100)));
        assertEquals(List.of(1, 3), best.stream().map(Candidate::localLane).toList());
    }

    @Test
    void aGpusOwnNicIsNotDilutedByASocketNicWhenThePeerSideIsNodeAnyway() {
        // lanes 0 and 2 sit on the GPU's PCIe switch (PIX), lane 1 on the same socket (NODE); the peer's NICs are NODE
        List<Candidate> best = Planner.best(List.of(
                c(0, Level.PIX, Level.NODE, 100), c(1, Level.NODE, Level.NODE, 100), c(2, Level.PIX, Level.NODE, 100)));
        assertEquals(List.of(0, 2), best.stream().map(Candidate::localLane).toList());
    }

    @Test
    void smallTransfersGoOnOneLaneRotating() {
        Planner p = new Planner(1 << 20, 128 << 10);
        List<Candidate> best = List.of(c(0, Level.PIX, Level.PIX, 100), c(1, Level.PIX, Level.PIX, 100));
        assertEquals(0, p.assign(best, 4096, 0).pairs()[0].localLane());
        assertEquals(1, p.assign(best, 4096, 1).pairs()[0].localLane());
        assertEquals(1, p.assign(best, (128 << 10) - 1, 0).size());
    }

    @Test
    void theSameStripesAreGivenAgainForTheSamePairsAndBytes() {
        Planner p = new Planner(1 << 20, 128 << 10);
        List<Candidate> best = List.of(c(0, Level.PIX, Level.PIX, 100), c(1, Level.PIX, Level.PIX, 100));
        long bytes = 8L << 20;
        Planner.Assignment a = p.assign(best, bytes, 0);
        assertSame(a, p.assign(best, bytes, 1), "a repeated transfer plans nothing new");
        Planner.Assignment other = p.assign(best, bytes + 4096, 0);
        assertNotSame(a, other);
        assertEquals(bytes + 4096, other.length()[0] + other.length()[1], "a new size is striped anew");
        // a new ranking (the peer's lanes changed) is a new list, even with equal pairs: planned anew
        List<Candidate> reranked = List.of(c(0, Level.PIX, Level.PIX, 300), c(1, Level.PIX, Level.PIX, 100));
        Planner.Assignment r = p.assign(reranked, bytes, 0);
        assertTrue(
                r.length()[0] > r.length()[1],
                "stripes follow the new weights: " + r.length()[0] + ", " + r.length()[1]);
        assertNotSame(r, p.assign(best, bytes, 0));
    }

    @Test
    void stripesLargeTransfersInProportionToBandwidthAndCoversEveryByte() {
        Planner p = new Planner(1 << 20, 128 << 10);
        List<Candidate> best = List.of(
                c(0, Level.PIX, Level.PIX, 400), c(1, Level.PIX, Level.PIX, 200), c(2, Level.PIX, Level.PIX, 200));
        long bytes = (40L << 20) + 17;
        Planner.Assignment a = p.assign(best, bytes, 0);
        assertEquals(3, a.size());
        long covered = 0;
        for (int i = 0; i < a.size(); i++) {
            assertEquals(covered, a.start()[i], "stripes are contiguous");
            covered += a.length()[i];
        }
        assertEquals(bytes, covered);
        assertEquals(21, a.chunks()[0]);
        assertEquals(10, a.chunks()[1]);
        assertEquals(10, a.chunks()[2]);
    }

    @Test
    void planJsonHasTheContractFields() {
        Plan plan = new Plan(
                List.of(new PlanLane(0, "0000:1a:00.0", 0, "0000:8a:00.0", "PIX", "PXB", 10, 1)), 10, "why \"quoted\"");
        assertEquals(
                "{\"lanes\": [{\"localNic\": \"0000:1a:00.0\", \"remoteNic\": \"0000:8a:00.0\", \"localLevel\": \"PIX\", "
                        + "\"remoteLevel\": \"PXB\", \"bytes\": 10, \"chunks\": 1}], \"reason\": \"why \\\"quoted\\\"\"}",
                plan.toJson());
        assertTrue(plan.toText().contains("0000:8a:00.0"));
    }
}
