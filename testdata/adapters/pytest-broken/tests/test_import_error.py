import no_such_module_sgpu_fixture


def test_never():
    pass
