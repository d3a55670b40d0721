package io.rdma4j.ibverbs.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.topology.NicFilter;
import io.rdma4j.topology.NicFilterCases;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The NIC filter picks verbs devices by topology's {@link NicFilter} rules, the same table libfabric passes. */
class NicFilterSelectionTest {
    @Test
    void picksDevicesAsTheSharedTableSays() {
        List<String> wrong = new ArrayList<>();
        for (NicFilterCases.Case c : NicFilterCases.CASES) {
            List<String> kept = IbverbsEngineProvider.select(NicFilterCases.DEVICES, NicFilter.parse(c.filter()));
            if (!kept.equals(c.kept())) {
                wrong.add("'" + c.filter() + "' kept " + kept + ", expected " + c.kept());
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void aFilterForAnotherPortDropsTheDevice() {
        // this backend uses port 1 only
        assertEquals(
                List.of("rxe0"),
                IbverbsEngineProvider.select(List.of("mlx5_0", "rxe0"), NicFilter.parse("mlx5_0:2,rxe0")));
    }
}
