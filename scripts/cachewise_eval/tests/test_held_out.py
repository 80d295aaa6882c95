"""The validation figures of held_out (the one place they are computed) on hand-derived cases."""
import unittest

from cachewise_eval import held_out


def pair(ratio, errors, residuals=()):
    return {"top1_over_best": ratio, "top_errors": list(errors), "top10_residuals": list(residuals)}


class PairFigures(unittest.TestCase):
    def test_the_predicted_best_over_the_fastest_and_the_ranked_configs_errors(self):
        # Config 2 was not timed, config 3 not ranked; ranked order 0 (rank 1), 1 (rank 2).
        case = {"times_us": [10.0, 8.0, None, 12.0]}
        predicted = {"ranks": [1, 2, 4, None], "times_us": [11.0, 8.8, 5.0, None]}
        figures = held_out.pair_figures(None, case, predicted)
        self.assertAlmostEqual(figures["top1_over_best"], 10.0 / 8.0)  # fastest measured: 8, unranked 12 counts
        self.assertEqual(len(figures["top_errors"]), 2)
        self.assertAlmostEqual(figures["top_errors"][0], 0.1)  # 11 / 10 - 1
        self.assertAlmostEqual(figures["top_errors"][1], 0.1)  # 8.8 / 8 - 1
        self.assertAlmostEqual(figures["top10_residuals"][0], 10.0 / 11.0)

    def test_the_fastest_measured_counts_even_when_it_was_not_ranked(self):
        case = {"times_us": [10.0, 5.0]}
        predicted = {"ranks": [1, None], "times_us": [10.0, None]}
        self.assertAlmostEqual(held_out.pair_figures(None, case, predicted)["top1_over_best"], 2.0)


class Summaries(unittest.TestCase):
    def test_median_worst_and_mean_error_per_family_and_for_all(self):
        pairs = {"gemm n=512": [pair(1.0, [0.1, 0.3]), pair(1.2, [0.2])],
                 "gemm n=1024": [pair(1.1, [0.0])],
                 "copy n=4096": [pair(1.05, [0.4])]}
        out = held_out.summarize(pairs)
        self.assertEqual(out["gemm"]["pairs"], 3)
        self.assertEqual(out["gemm"]["top1_over_best_median"], 1.1)
        self.assertEqual(out["gemm"]["top1_over_best_worst"], 1.2)
        self.assertEqual(out["gemm"]["worst_case"], "gemm n=512")
        self.assertEqual(out["gemm"]["top_time_error_mean"], 0.15)  # (0.1 + 0.3 + 0.2 + 0.0) / 4
        self.assertEqual(out["all"]["pairs"], 4)
        self.assertEqual(out["all"]["top1_over_best_median"], 1.075)  # (1.05 + 1.1) / 2
        self.assertEqual(out["all"]["top_time_error_mean"], 0.2)  # 1.0 / 5

    def test_objective_weighs_the_time_error_a_quarter(self):
        self.assertAlmostEqual(held_out.objective([pair(1.0, [0.2]), pair(1.2, [0.4, 0.0])]), 1.1 + 0.25 * 0.2)


class Counters(unittest.TestCase):
    METRICS = {"dram__bytes_read.sum": 3e6, "dram__bytes_write.sum": 1e6,
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 400.0,
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100.0,
               "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 0.0,
               "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 0.0}

    def test_derived_counters(self):
        self.assertEqual(held_out.counter_value(self.METRICS, "DRAM MB"), 4.0)
        self.assertEqual(held_out.counter_value(self.METRICS, "DRAM read MB"), 3.0)
        self.assertEqual(held_out.counter_value(self.METRICS, "sectors/req ld"), 4.0)

    def test_absent_or_zero_request_counters_are_none(self):
        self.assertIsNone(held_out.counter_value(self.METRICS, "sectors/req st"))
        self.assertIsNone(held_out.counter_value(self.METRICS, "L1 hit %"))
        self.assertIsNone(held_out.counter_value({"dram__bytes_read.sum": 1.0}, "DRAM MB"))


class Percentile(unittest.TestCase):
    def test_linear_between_ranks(self):
        self.assertAlmostEqual(held_out.percentile([4, 1, 3, 2], 0.1), 1.3)  # position 0.3
        self.assertAlmostEqual(held_out.percentile([4, 1, 3, 2], 0.9), 3.7)  # position 2.7
        self.assertEqual(held_out.percentile([5], 0.9), 5)


if __name__ == "__main__":
    unittest.main()
