"""The statistics of corpus_figures on hand-derived cases."""
import math
import unittest

from cachewise_eval import corpus_figures as cf


class AverageRanks(unittest.TestCase):
    def test_ties_share_the_mean_rank(self):
        # 20 and 20 take ranks 2 and 3 -> both 2.5
        self.assertEqual(cf.average_ranks([30, 20, 10, 20]), [4, 2.5, 1, 2.5])


class Spearman(unittest.TestCase):
    def test_same_order_is_one_and_reverse_is_minus_one(self):
        self.assertAlmostEqual(cf.spearman([1, 2, 3, 4], [10, 20, 30, 40]), 1.0)
        self.assertAlmostEqual(cf.spearman([1, 2, 3, 4], [40, 30, 20, 10]), -1.0)

    def test_with_ties(self):
        # ranks x: 1, 2.5, 2.5, 4; y: 1, 2, 3, 4; both means 2.5
        # deviations x: -1.5, 0, 0, 1.5; y: -1.5, -0.5, 0.5, 1.5
        # sxy = 2.25 + 2.25 = 4.5; sxx = 4.5; syy = 2.25 + 0.25 + 0.25 + 2.25 = 5
        # rho = 4.5 / sqrt(4.5 * 5) = sqrt(0.9) = 0.948683
        self.assertAlmostEqual(cf.spearman([1, 2, 2, 3], [1, 2, 3, 4]), math.sqrt(0.9), places=9)

    def test_monotone_but_not_linear_is_one(self):
        # ranks ignore the values' scale: 1, 10, 1000 ranks as 1, 2, 3
        self.assertAlmostEqual(cf.spearman([1, 10, 1000], [5, 6, 7]), 1.0)

    def test_no_ranking_is_none(self):
        self.assertIsNone(cf.spearman([2, 2, 2], [1, 2, 3]))
        self.assertIsNone(cf.spearman([1], [1]))


class BestOfTop(unittest.TestCase):
    # predicted order: index 1 (1 us), index 2 (2 us), index 0 (3 us); measured 10, 12, 11
    predicted = [3, 1, 2]
    measured = [10, 12, 11]

    def test_top1_over_best(self):
        self.assertAlmostEqual(cf.best_of_top(self.predicted, self.measured, 1, 10), 12 / 10)

    def test_top2_and_top3(self):
        self.assertAlmostEqual(cf.best_of_top(self.predicted, self.measured, 2, 10), 11 / 10)
        self.assertAlmostEqual(cf.best_of_top(self.predicted, self.measured, 3, 10), 1.0)

    def test_best_measured_outside_the_matched_set_counts(self):
        # the measured best (8 us) was never predicted: the predicted best's 12 us is 1.5x of it
        self.assertAlmostEqual(cf.best_of_top(self.predicted, self.measured, 1, 8), 1.5)


def kernel(half, times, steps=None):
    candidates = []
    for i, t in enumerate(times):
        c = {"id": f"B={i}", "variant": "", "params": {"B": i}, "median_us": t, "status": "ok"}
        if steps:
            c["steps"] = steps[i]
        candidates.append(c)
    return {"half": half, "candidates": candidates}


class KernelAndAggregate(unittest.TestCase):
    def test_kernel_figures_match_by_parameters(self):
        measured = kernel("held_out", [10.0, 20.0, 40.0])
        # predicted 30, 10, 20 for B=0,1,2: the predicted best is B=1 (20 us measured) -> 2.0;
        # top 3 holds B=0 -> 1.0; ranks predicted 3,1,2 vs measured 1,2,3 -> rho = 1 - 6*(4+1+1)/(3*8) = -0.5
        predictions = {cf.candidate_key("", {"B": b}, ["B"]): t for b, t in ((0, 30.0), (1, 10.0), (2, 20.0))}
        row = cf.kernel_figures(measured, predictions, [])
        self.assertAlmostEqual(row["top1_over_best"], 2.0)
        self.assertAlmostEqual(row["top3_over_best"], 1.0)
        self.assertAlmostEqual(row["spearman"], -0.5)
        self.assertEqual([c["ratio"] for c in row["candidates"]], [3.0, 0.5, 0.5])

    def test_steps_divide_the_measured_time(self):
        # 100 us over 4 steps (25 per step) beats 30 us over 1 step
        measured = kernel("fit", [30.0, 100.0], steps=[1, 4])
        predictions = {cf.candidate_key("", {"B": 0}, ["B"]): 30.0, cf.candidate_key("", {"B": 1}, ["B"]): 25.0}
        row = cf.kernel_figures(measured, predictions, [])
        self.assertEqual(row["measured_best"], "B=1")
        self.assertAlmostEqual(row["top1_over_best"], 1.0)

    def test_a_kernel_not_predicted_is_a_miss(self):
        good = cf.kernel_figures(kernel("held_out", [10.0, 11.0]),
                                 {cf.candidate_key("", {"B": 0}, ["B"]): 10.0, cf.candidate_key("", {"B": 1}, ["B"]): 11.0}, [])
        bad = cf.kernel_figures(kernel("held_out", [5.0, 6.0]), {}, ["front end: unsupported"])
        self.assertEqual(bad["reason"], "front end: unsupported")
        figures = cf.aggregate({"good": good, "bad": bad})
        # top-1/best: 1.0 and a miss (infinite) -> worst infinite; top 3: 1 of 2 kernels
        self.assertEqual(figures["top1_over_best_worst"], math.inf)
        self.assertAlmostEqual(figures["top3_within_1_02_fraction"], 0.5)
        # ratios 1.0, 1.0 within the band, of 4 measured candidates -> 0.5
        self.assertAlmostEqual(figures["ratio_within_0_75_1_33_fraction"], 0.5)
        self.assertEqual(figures["kernels_not_predicted"], {"bad": "front end: unsupported"})
        self.assertFalse(figures["goals"]["top1_worst_le_1_10"])


if __name__ == "__main__":
    unittest.main()
