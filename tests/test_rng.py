from simfl.core.rng import RngTree


def test_same_name_same_numbers_regardless_of_order():
    a, b = RngTree(7), RngTree(7)
    b.stream("other").random(5)
    assert (a.stream("channel/uplink/3").random(4) == b.stream("channel/uplink/3").random(4)).all()


def test_different_names_and_seeds_differ():
    t = RngTree(7)
    assert (t.stream("x").random(4) != t.stream("y").random(4)).all()
    assert (t.stream("x").random(4) != RngTree(8).stream("x").random(4)).all()


def test_int_seed_is_stable_and_fits_63_bits():
    assert RngTree(1).int_seed("model/init") == RngTree(1).int_seed("model/init")
    assert 0 <= RngTree(1).int_seed("model/init") < 2**63
