// named against the contract
